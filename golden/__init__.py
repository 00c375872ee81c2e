"""Pure-Python golden models: the executable specification of the OAE link (no Amaranth here)."""
