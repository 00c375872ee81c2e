"""What the commands share on their command line."""


def command_help(doc: str) -> str:
    """A command's ``--help`` description: the first paragraph of its module docstring, on one
    line (its first line alone stops mid-sentence)."""
    return " ".join(doc.strip().split("\n\n")[0].split())
