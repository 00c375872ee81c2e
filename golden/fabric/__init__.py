"""The fabric of PROTOCOL.md 10, golden: the node (``node.py``) and its parts, the node frame and
control messages (``message.py``), routing (``routing.py``), the topology table (``table.py``),
the arbiter's rules (``arbiter.py``), the end-to-end sequence arithmetic (``e2e.py``), a
stream's store and reorder buffer (``store.py``, ``reorder.py``), what a port's classes take
(``choice.py``), and the node's two engines (``frame_engine.py``, ``control_engine.py``) with
their choices (``frame_choice.py``, ``control_choice.py``). The fabric's graph is a spec
module, ``golden.topology``.
"""
