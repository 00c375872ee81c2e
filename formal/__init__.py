"""Formal proofs of the link's small blocks with SymbiYosys: ``python -m formal`` (docs/FORMAL.md)."""


def all_proofs():
    """Every proof, in the order ``python -m formal`` runs them."""
    from formal import cdc, forward, framer, queue, resume, rlfd, selective, store, token_plane

    return [
        *queue.proofs(),
        *rlfd.proofs(),
        *token_plane.proofs(),
        *cdc.proofs(),
        *framer.proofs(),
        *resume.proofs(),
        *selective.proofs(),
        *forward.proofs(),
        *store.proofs(),
    ]
