# amaranth: UnusedElaboratable=no
"""Every RTL endpoint parameter is validated at construction, with the golden model's limits."""

import pytest
from amaranth.hdl import Fragment

from golden.params import LinkParams
from rtl.link.core import LinkCore
from rtl.link.endpoint import LinkEndpoint
from rtl.link.framer import Framer
from rtl.link.framer.receiver import Delivery
from rtl.link.framer.sender import ReplayStore
from rtl.link.token_plane import TokenPlane
from rtl.simulation.link_pair import LinkPair

BAD = [
    ({"num_classes": 0}, "num_classes"),
    ({"num_classes": 5}, "num_classes"),
    ({"echo_mode": "half"}, "echo_mode"),
    ({"window": 2048}, "window"),
    ({"window": 32, "num_classes": 4}, "window"),
    ({"window": True}, "window"),
    ({"margin": 0}, "margin"),
    ({"los_cycles": 11}, "los_cycles"),
    ({"probes": 65}, "probes"),
    ({"max_rtt": 2}, "max_rtt"),
    ({"port_id": 256}, "port_id"),
    ({"nonce_seed": 0}, "nonce_seed"),
    ({"read_slices": 1}, "read_slices"),  # nine cycles a frame: slower than the wire
    ({"read_slices": 3}, "read_slices"),
    ({"read_slices": 8.0}, "read_slices"),
]


@pytest.mark.parametrize("kwargs, name", BAD)
def test_link_core_rejects_what_the_golden_model_rejects(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        LinkParams(**kwargs)
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        LinkCore(**kwargs)


def test_link_core_accepts_the_golden_defaults():
    p = LinkParams()
    core = LinkCore(**p.as_dict())
    assert len(core.frames_in) == p.num_classes
    TokenPlane()


@pytest.mark.parametrize("kwargs, name", [({"fifo_depth": 6}, "fifo_depth"), ({"window": 0}, "window")])
def test_endpoint_rejects_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        LinkEndpoint(**kwargs)


@pytest.mark.parametrize("read_slices", [1, 3, 16, True])
def test_delivery_rejects_a_read_width_the_protocol_does_not_have(read_slices):
    with pytest.raises(ValueError, match=r"^read_slices must be one of 8, 4, 2"):
        Delivery(num_classes=2, seq_bits=8, slot_bits=4, read_slices=read_slices)


def test_framer_rejects_bad_parameters():
    with pytest.raises(ValueError, match=r"^echo_mode must be"):
        Framer(LinkParams(echo_mode="none"))
    with pytest.raises(TypeError, match=r"^params must be a LinkParams"):
        Framer({"echo_mode": "full"})


def test_pair_ends_must_agree():
    with pytest.raises(ValueError, match="must agree on num_classes"):
        LinkPair({"num_classes": 1}, {"num_classes": 2, "port_id": 2})


def test_both_recovery_modes_build_and_a_bad_one_is_named():
    """Go-back-N and selective repeat (PROTOCOL.md 4.6) are both built; the selective framer has
    its per-class redo queues, the go-back-N one none."""
    for recovery in ("go_back_n", "selective"):
        core = LinkCore(recovery=recovery, token_copies=True)
        assert core.params.recovery == recovery
        fragment = Fragment.get(Framer(LinkParams(recovery=recovery, num_classes=2)), None)
        queues = {name for _, name, *_ in fragment.subfragments}
        assert ({"redo0", "redo1"} <= queues) == (recovery == "selective"), queues
    for build in (lambda: LinkCore(recovery="sack"), lambda: LinkEndpoint(recovery="sack")):
        with pytest.raises(ValueError, match=r"^recovery must be 'go_back_n' or 'selective'"):
            build()


@pytest.mark.parametrize(
    "kwargs, name",
    [({"window_slots": 0, "window": 1}, "window_slots"), ({"window_slots": 16, "window": 17}, "window")],
)
def test_replay_store_rejects_a_window_its_memory_cannot_hold(kwargs, name):
    """The replay memory holds W' frames; its write enable relies on W <= W' (sender.py)."""
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        ReplayStore(num_classes=1, seq_bits=12, **kwargs)
