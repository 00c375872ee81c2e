"""Validation of generation parameters, shared by every RTL component: a bad value stops
elaboration with a message that names the parameter, before any hardware is built."""


def check_int(name: str, value, low: int, high: int | None = None):
    """Raise ValueError unless ``value`` is an int (not a bool) in [low, high]."""
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= low and (high is None or value <= high)
    if not ok:
        span = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be an integer {span}, not {value!r}")
