"""What each class of a port takes in a cycle (PROTOCOL.md 10.7, 10.11).

A port offers each of its classes one frame a cycle. What waits for it: per destination whose
next hop is this port, the frames the node forwards (a FIFO per destination and class) and the
node's own stream (its store, from the next frame to send). :func:`choose` is the choice as a
function of what the port and the node's queues show; the node then takes the frames chosen.

* **Control class**, when the table holds the link UP or the port is UP, the port has sent its
  last control frame to the last slice and takes a frame: the node's own control streams first
  (the verdict's path goes first), in destination order, then the forwarded control frames, in
  destination order.
* **Each user class**, only while the table holds the link UP (invariant 1 of 10.4) and the
  class takes a frame: round robin over the sources in the order forwarded frames of each
  destination, then own streams of each destination, from the one after the last chosen.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class PortView:
    """What one port and the node's queues show in a cycle, per destination index ``d`` (the
    node's other nodes in id order). ``control_open``: the control class may take a frame (the
    table or the port UP, the last control frame sent, the class ready); ``link_up``: the table
    holds the link UP; ``ready``: per user class, the class takes a frame. ``hop_control[d]``,
    ``hop_user[d]``: this port is the destination's next hop for control and for user frames.
    ``own_control[d]``, ``fwd_control[d]``: a frame waits in the own control stream / in the
    forwarded control queue. ``own_user[c][d]``, ``fwd_user[c][d]``: the same per user class."""

    control_open: bool
    link_up: bool
    ready: tuple
    hop_control: tuple
    hop_user: tuple
    own_control: tuple
    fwd_control: tuple
    own_user: tuple
    fwd_user: tuple


@dataclass(frozen=True)
class Choice:
    """``control``: ("own" | "fwd", d) or None; ``user``: per user class the same; ``turn``: per
    user class the round robin's next start, an index into the sources (fwd 0..D-1, own D..2D-1)."""

    control: tuple | None
    user: tuple
    turn: tuple


def choose(view: PortView, turn: tuple) -> Choice:
    dests = len(view.hop_control)
    control = None
    if view.control_open:
        for what, waiting in (("own", view.own_control), ("fwd", view.fwd_control)):
            d = next((d for d in range(dests) if view.hop_control[d] and waiting[d]), None)
            if d is not None:
                control = (what, d)
                break
    user, turns = [], []
    for c, start in enumerate(turn):
        chosen = None
        if view.link_up and view.ready[c]:
            sources = [("fwd", d, view.fwd_user[c][d]) for d in range(dests)]
            sources += [("own", d, view.own_user[c][d]) for d in range(dests)]
            for i in range(2 * dests):
                j = (start + i) % (2 * dests)
                what, d, waiting = sources[j]
                if waiting and view.hop_user[d]:
                    chosen, start = (what, d), (j + 1) % (2 * dests)
                    break
        user.append(chosen)
        turns.append(start)
    return Choice(control, tuple(user), tuple(turns))
