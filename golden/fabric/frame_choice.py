"""What a node's frame engine handles in a cycle (PROTOCOL.md 10.11, step 3).

The frame engine takes a frame in a cycle and handles it in the next. :func:`pick` is its choice
as a function of what the node's sources show at the start of the cycle that takes it.

* A stream draining its reorder buffer goes first. If its next frame is a control message with
  no room among the events, the engine waits this cycle.
* Else the ports' control inboxes, in turn from the one after the last taken.
* Else the frame a settled port offers, the first port in link order. It never waits: the
  settling port takes no frame until its take-out is done (10.6), and it may be the only way
  out of the queue the frame goes into.
* Else the user inboxes (each port's user classes), in turn from the one after the last taken.

An inbox whose frame has to wait (its forward queue full, or a message with no room among the
events) is passed over.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineView:
    """What the frame engine's sources show in a cycle. ``draining``: a stream drains its reorder
    buffer; ``drain_waits``: its next frame has to wait. Per control inbox (one per port, in
    link order) and per user inbox (each port's user classes, ports in link order):
    ``*_valid``, a frame is there; ``*_waits``, it has to wait. ``offer_valid``: per port, in
    link order, a settled port offers a frame."""

    draining: bool
    drain_waits: bool
    control_valid: tuple
    control_waits: tuple
    offer_valid: tuple
    user_valid: tuple
    user_waits: tuple


@dataclass(frozen=True)
class EngineChoice:
    """``source``: "drain", ("control", i), ("offer", i), ("user", i) or None; ``turn``: the
    next starts of the control and the user inboxes' turns."""

    source: object
    turn: tuple


def _in_turn(valid, waits, start):
    """The first source from ``start`` on, round, that has a frame that need not wait, and the
    start after it; (None, start) if none."""
    n = len(valid)
    for i in range(n):
        j = (start + i) % n
        if valid[j] and not waits[j]:
            return j, (j + 1) % n
    return None, start


def pick(view: EngineView, turn: tuple) -> EngineChoice:
    control_turn, user_turn = turn
    if view.draining:
        return EngineChoice(None if view.drain_waits else "drain", turn)
    i, control_turn = _in_turn(view.control_valid, view.control_waits, control_turn)
    if i is not None:
        return EngineChoice(("control", i), (control_turn, user_turn))
    i = next((p for p, ok in enumerate(view.offer_valid) if ok), None)
    if i is not None:
        return EngineChoice(("offer", i), turn)
    i, user_turn = _in_turn(view.user_valid, view.user_waits, user_turn)
    return EngineChoice(None if i is None else ("user", i), (control_turn, user_turn))
