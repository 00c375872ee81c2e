"""Components every subsystem shares: the link word and tag codec, CRCs, the bisynchronous FIFO, queues
and stream stages.
"""
