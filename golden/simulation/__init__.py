"""Golden twins of the simulation-only RTL designs: the channel with its faults."""
