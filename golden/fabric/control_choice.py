"""What a node's control engine does in a cycle (PROTOCOL.md 10.11, step 2).

The control engine takes an action in a cycle and acts on it in the next. :func:`pick_action` is
its choice as a function of its flags, its event queue and the control streams it has to
acknowledge, all as they stood at the start of the cycle that takes it.

* The flags first, so that what one event set in motion is finished before the next event, in
  this order: a port to report, a port to check for standing in, a link to apply the arbiter's
  rules to, a destination whose waiting control messages may take a freed window slot; within
  each, the lowest index.
* Else the oldest event, if one was queued before the cycle.
* Else a control stream's ACK due, the lowest origin first. The ACK goes into its ACK slot,
  which always takes it (10.11), so nothing here waits for room.
"""

from dataclasses import dataclass

# The flag groups, in the order the engine serves them.
FLAGS = ("announce", "stand_in", "arbitrate", "flush")


@dataclass(frozen=True)
class ControlView:
    """The control engine's inputs at the start of a cycle. ``announce``, ``stand_in``: a bit per
    port, in link order; ``arbitrate``: a bit per link of the fabric; ``flush``, ``ack_due``: a
    bit per other node, in id order (its control messages may take a freed slot; its control
    stream is due an ACK); ``events``: an event is queued."""

    announce: tuple
    stand_in: tuple
    arbitrate: tuple
    flush: tuple
    events: bool
    ack_due: tuple


def _lowest(bits):
    return next((i for i, flag in enumerate(bits) if flag), None)


def pick_action(view: ControlView):
    """The action: (flag group, index), "event", ("ack", other node's index) or None."""
    for name in FLAGS:
        i = _lowest(getattr(view, name))
        if i is not None:
            return (name, i)
    if view.events:
        return "event"
    i = _lowest(view.ack_due)
    return None if i is None else ("ack", i)
