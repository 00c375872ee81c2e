"""What a node's control engine does in a cycle (PROTOCOL.md 10.11, step 2).

The control engine takes one action a cycle. :func:`pick_action` is its choice as a function of
its flags, its event queue and the ACKs it owes, all as they stood at the start of the cycle;
the node then takes the action chosen.

* The flags first, so that what one event set in motion is finished before the next event, in
  this order: a port to report, a port to check for standing in, a link to apply the arbiter's
  rules to, a destination whose waiting control messages may take a freed window slot; within
  each, the lowest index.
* Else the oldest event, if one was queued before the cycle.
* Else an ACK due (a control stream's, or a user stream's owed one), the lowest stream whose
  forward queue has room for two frames (the frame engine may write the same queue in the
  cycle); the others wait, and are counted (``held``).
"""

from dataclasses import dataclass

# The flag groups, in the order the engine serves them.
FLAGS = ("announce", "stand_in", "arbitrate", "flush")


@dataclass(frozen=True)
class ControlView:
    """The control engine's inputs at the start of a cycle. ``announce``, ``stand_in``: a bit per
    port, in link order; ``arbitrate``: a bit per link of the fabric; ``flush``: a bit per other
    node, in id order; ``events``: an event is queued; ``ack_due``, ``ack_room``: per stream
    the node acknowledges (each other node's user classes and its control stream, in the
    order of :func:`ack_streams`), an ACK is due, and its forward queue has room for two."""

    announce: tuple
    stand_in: tuple
    arbitrate: tuple
    flush: tuple
    events: bool
    ack_due: tuple
    ack_room: tuple


@dataclass(frozen=True)
class ControlChoice:
    """``action``: (flag group, index), "event", ("ack", stream index) or None; ``held``: ACKs
    due whose queue has no room, when the engine looked for one (0 otherwise)."""

    action: object
    held: int = 0


def ack_streams(dests, user_classes: int, user: int, control: int) -> list:
    """The streams a node acknowledges, in the order the engine serves them: (origin, class,
    kind) sorted, ``user`` and ``control`` the kinds' codes (``golden.encoding.NodeKind``)."""
    return sorted([(d, c, user) for d in dests for c in range(user_classes)] + [(d, 0, control) for d in dests])


def pick_action(view: ControlView) -> ControlChoice:
    for name in FLAGS:
        i = next((i for i, flag in enumerate(getattr(view, name)) if flag), None)
        if i is not None:
            return ControlChoice((name, i))
    if view.events:
        return ControlChoice("event")
    due = [due and room for due, room in zip(view.ack_due, view.ack_room)]
    held = sum(view.ack_due) - sum(due)
    i = next((i for i, ok in enumerate(due) if ok), None)
    return ControlChoice(None if i is None else ("ack", i), held)
