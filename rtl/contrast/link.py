"""One end of the PCIe-style contrast link in hardware: twin of golden/contrast/link.py
(docs/CONTRAST.md).

The LTSSM (rtl/contrast/ltssm.py), the data link layer (rtl/contrast/dll.py), the requester and the completer
(rtl/contrast/requester.py) on the 72-bit wire, wired in the order of the golden ``PcieLink.step``: the
word for this cycle goes out (electrical idle, PAD at the lowest rate, SKP when due, else the
LTSSM's training word or the data link layer's), the arriving word is taken (PAD and SKP by the
LTSSM alone, anything else by the data link layer in L0 and then the LTSSM), the data link
layer's timers advance if it is still in L0, the LTSSM's timers advance, the requester's
timeouts run, and at the end the data link layer leaves L0 or resets with DL_Down (the
completer drops its answers then too). A simulation model, as its parts are.

Ports:
    rx (in, :class:`rtl.common.slice.LinkPortSignature`), tx (out): the wire, as the OAE endpoint's.
    far_receiver (in): receiver detection would find the peer (Detect.Active).
    frames_in (in stream, 512 bits): user frames, each sent as a posted TLP; taken when the data
        link layer starts a new TLP and neither a completion nor a request is waiting.
    frames_out (out stream, 512 bits, always ready): the posted TLPs accepted in order.
    request (in), request_ok, request_tag (out): a read request this cycle, and the tag it got.
    completer_delay (in): cycles this end's completer takes to answer a request (reset value: the
        parameter), a simulation knob for a slow completer.
    dl_up, completer_alive (out): the beliefs the ghost meter reads.
    state, rate (out), and every counter of golden ``PcieLink.counters``, wrapping at 2**16.
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.encoding import LtssmState as S
from golden.encoding import PcieCode as P
from golden.encoding import PcieRate, TlpType
from golden.pcie_params import COMPLETER_DELAY_BITS, PcieParams
from rtl.common.slice import LinkPortSignature, odd_parity_tag
from rtl.contrast.dll import COUNTERS as DLL_COUNTERS
from rtl.contrast.dll import DataLinkLayer
from rtl.contrast.ltssm import COUNTERS as LTSSM_COUNTERS
from rtl.contrast.ltssm import Ltssm
from rtl.contrast.requester import REQUESTER_COUNTERS, Completer, Requester

_PAYLOAD = enc.FRAME_BYTES * 8
COUNTERS = LTSSM_COUNTERS + DLL_COUNTERS + REQUESTER_COUNTERS + ("completer_drops",)


class PcieLink(wiring.Component):
    """See the module docstring. ``params``: a :class:`golden.pcie_params.PcieParams`."""

    def __init__(self, params: PcieParams):
        if not isinstance(params, PcieParams):
            raise ValueError(f"params must be a PcieParams, not {type(params).__name__}")
        self.p = params
        members = {
            "rx": In(LinkPortSignature()),
            "tx": Out(LinkPortSignature()),
            "far_receiver": In(1, init=1),
            "frames_in": In(stream.Signature(_PAYLOAD)),
            "frames_out": Out(stream.Signature(_PAYLOAD, always_ready=True)),
            "request": In(1),
            "request_ok": Out(1),
            "request_tag": Out(enc.STP_REQ_TAG_BITS),
            "completer_delay": In(COMPLETER_DELAY_BITS, init=params.completer_delay),
            "dl_up": Out(1),
            "completer_alive": Out(1),
            "state": Out(S),
            "rate": Out(1),
        }
        members.update({name: Out(enc.STATUS_COUNTER_BITS) for name in COUNTERS})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        p = self.p
        m.submodules.ltssm = ltssm = Ltssm(p)
        m.submodules.dll = dll = DataLinkLayer(p)
        m.submodules.requester = req = Requester(p)
        m.submodules.completer = cpl = Completer(p)

        # --- Transmit (golden ``_transmit``) ------------------------------------------------------
        phase = Signal(2, name="phase")  # golden ``now`` modulo the low-rate divisor
        m.d.sync += phase.eq(phase + 1)
        since_skp = Signal(range(p.skp_interval + 2), name="since_skp")
        code, body = Signal(enc.TAG_BITS - 1, name="tx_code"), Signal(enc.SLICE_BITS, name="tx_body")
        m.d.comb += [self.tx.word.tag.eq(odd_parity_tag(code)), self.tx.word.slice.eq(body)]
        low = ltssm.rate == PcieRate.LOW
        m.d.comb += dll.low.eq(low)
        with m.If(ltssm.tx_ei):
            pass
        with m.Elif(low & (phase != 0)):
            m.d.comb += [self.tx.valid.eq(1), code.eq(P.PAD)]
        with m.Elif((since_skp >= p.skp_interval) & ~dll.busy):
            m.d.comb += [self.tx.valid.eq(1), code.eq(P.SKP)]
            m.d.sync += since_skp.eq(0)
        with m.Else():
            m.d.comb += self.tx.valid.eq(1)
            m.d.sync += since_skp.eq(since_skp + 1)
            with m.If(ltssm.tx_l0):
                m.d.comb += [dll.slot.eq(1), code.eq(dll.tx_code), body.eq(dll.tx_body)]
            with m.Else():
                m.d.comb += [ltssm.sent.eq(1), code.eq(ltssm.tx_code), body.eq(ltssm.tx_body)]

        # The next TLP (golden ``_next_tlp``): a due completion, else a queued request, else a frame.
        m.d.comb += [dll.new_payload.eq(self.frames_in.payload), dll.new_type.eq(TlpType.POSTED)]
        with m.If(cpl.head_ready):
            m.d.comb += [
                dll.new_valid.eq(1),
                dll.new_type.eq(TlpType.COMPLETION),
                dll.new_tag.eq(cpl.head_tag),
                dll.new_payload.eq(cpl.head_payload),
                cpl.pop.eq(dll.new_take),
            ]
        with m.Elif(req.head_valid):
            m.d.comb += [
                dll.new_valid.eq(1),
                dll.new_type.eq(TlpType.REQUEST),
                dll.new_tag.eq(req.head_tag),
                dll.new_payload.eq(req.head_payload),
                req.pop.eq(dll.new_take),
            ]
        with m.Else():
            m.d.comb += [dll.new_valid.eq(self.frames_in.valid), self.frames_in.ready.eq(dll.new_take)]
        m.d.comb += [
            req.request.eq(self.request),
            self.request_ok.eq(req.request_ok),
            self.request_tag.eq(req.request_tag),
        ]

        # --- Receive (golden ``_receive`` with ``encoding.pcie_decode``) --------------------------
        tag, rx_body = self.rx.word.tag, self.rx.word.slice
        rx_code = tag[1:]
        known = Signal(name="rx_known")
        m.d.comb += known.eq(Cat(rx_code == c for c in sorted(enc.PCIE_CODES)).any())
        malformed = Signal(name="rx_malformed")
        m.d.comb += malformed.eq(self.rx.valid & (~tag.xor() | ~known))
        word = self.rx.valid & ~malformed
        pad, skp = Signal(name="rx_pad"), Signal(name="rx_skp")
        m.d.comb += [pad.eq(word & (rx_code == P.PAD)), skp.eq(word & (rx_code == P.SKP))]
        taken = ~pad & ~skp
        was_l0 = ltssm.state == S.L0
        m.d.comb += [
            ltssm.pad.eq(pad),
            ltssm.skp.eq(skp),
            ltssm.rx_valid.eq(taken),
            ltssm.rx_signal.eq(self.rx.valid),
            ltssm.rx_malformed.eq(malformed),
            ltssm.rx_code.eq(rx_code),
            ltssm.rx_body.eq(rx_body),
            dll.rx_valid.eq(taken & was_l0),
            dll.rx_signal.eq(self.rx.valid),
            dll.rx_malformed.eq(malformed),
            dll.rx_tag.eq(tag),
            dll.rx_body.eq(rx_body),
            ltssm.dll_recovery_rx.eq(dll.rollover_rx),
        ]
        accepted = dll.accept_valid
        m.d.comb += [
            self.frames_out.valid.eq(accepted & (dll.accept_type == TlpType.POSTED)),
            self.frames_out.payload.eq(dll.accept_payload),
            cpl.push.eq(accepted & (dll.accept_type == TlpType.REQUEST)),
            cpl.delay.eq(self.completer_delay),
            cpl.push_tag.eq(dll.accept_tag),
            cpl.push_payload.eq(dll.accept_payload),
            req.complete.eq(accepted & (dll.accept_type == TlpType.COMPLETION)),
            req.complete_tag.eq(dll.accept_tag),
            req.complete_payload.eq(dll.accept_payload),
        ]

        # --- Timers, then leaving L0 and DL_Down (golden ``step``) -------------------------------
        m.d.comb += [
            dll.tick.eq(was_l0 & (ltssm.state_after_rx == S.L0)),
            ltssm.dll_recovery_tick.eq(dll.rollover_tick),
            ltssm.far_receiver.eq(self.far_receiver),
            dll.leave_l0.eq(was_l0 & (ltssm.next_state != S.L0)),
        ]
        down = ltssm.link_up & ~ltssm.next_link_up
        m.d.comb += [dll.reset.eq(down), cpl.reset.eq(down)]

        m.d.comb += [
            self.dl_up.eq(ltssm.link_up),
            self.completer_alive.eq(req.completer_alive),
            self.state.eq(ltssm.state),
            self.rate.eq(ltssm.rate),
        ]
        for parts, names in ((ltssm, LTSSM_COUNTERS), (dll, DLL_COUNTERS), (req, REQUESTER_COUNTERS)):
            m.d.comb += [getattr(self, name).eq(getattr(parts, name)) for name in names]
        m.d.comb += self.completer_drops.eq(cpl.dropped)
        return m
