"""The contrast link's data link layer in hardware: twin of golden/contrast/dll.py (docs/CONTRAST.md 5).

One cycle does what the golden layer does in one ``PcieLink.step``, in the same order, as
combinational stages over a copy of the registers: choose the word for this slot (``slot``), take
the arriving word (``rx_valid``), advance the timers (``tick``), and at the end leave L0
(``leave_l0``) or reset on DL_Down (``reset``). The replay buffer is a memory of ``replay_tlps``
TLPs (type, tag, payload) addressed as a ring; the TLP on the wire is read from it word by word,
its LCRC computed as it goes.

Ports: in ``slot``, ``low`` (the lowest rate: timers four times longer), ``new_valid``/
``new_type``/``new_tag``/``new_payload`` (the next TLP the end would send; ``new_take`` says it
was taken), ``rx_valid``, ``rx_signal``, ``rx_malformed``, ``rx_tag``, ``rx_body``, ``tick``,
``leave_l0``, ``reset``. Out: ``tx_code``/``tx_body`` (the word for the slot, valid with
``slot``), ``busy`` (a TLP is half sent: no SKP now), ``accept_*`` (a TLP accepted in order this
cycle), ``rollover_rx``/``rollover_tick`` (REPLAY_NUM rolled over: direct Recovery), and the
counters named as golden ``DataLinkLayer.counters``, wrapping at 2**16. A simulation model, not
laid out for an FPGA clock.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.encoding import PcieCode as P
from golden.pcie_params import REPLAY_NUM_ROLLOVER, PcieParams
from rtl.common.crc import crc16_control, crc32_advance, crc32_first, crc32_of_slice

COUNTERS = (
    "tlps_sent",
    "tlps_replayed",
    "replays",
    "replay_timeouts",
    "replay_rollovers",
    "naks_sent",
    "naks_received",
    "bad_tlps",
    "duplicate_tlps",
    "bad_dllps",
    "dllps_out_of_range",
    "tlps_discarded",
)
_SEQ = enc.PCIE_SEQ_BITS
_HALF = 1 << (_SEQ - 1)
_PAYLOAD = enc.FRAME_BYTES * 8
_NONE, _ACK, _NAK = 0, 1, 2


def _wrap(value, modulo):
    """``value`` (< 2 * modulo) reduced modulo ``modulo`` (any modulo, not only powers of two)."""
    return Mux(value >= modulo, value - modulo, value)


class DataLinkLayer(wiring.Component):
    """See the module docstring. ``params``: a :class:`golden.pcie_params.PcieParams`."""

    def __init__(self, params: PcieParams):
        if not isinstance(params, PcieParams):
            raise ValueError(f"params must be a PcieParams, not {type(params).__name__}")
        self.p = params
        self._replay = params.cycles("replay_timer")
        self._ack = params.cycles("ack_latency")
        self._slots = params.replay_tlps
        members = {
            "slot": In(1),
            "low": In(1),
            "new_valid": In(1),
            "new_type": In(enc.STP_TYPE_BITS),
            "new_tag": In(enc.STP_REQ_TAG_BITS),
            "new_payload": In(_PAYLOAD),
            "new_take": Out(1),
            "rx_valid": In(1),
            "rx_signal": In(1),
            "rx_malformed": In(1),
            "rx_tag": In(enc.TAG_BITS),
            "rx_body": In(enc.SLICE_BITS),
            "tick": In(1),
            "leave_l0": In(1),
            "reset": In(1),
            "tx_code": Out(enc.TAG_BITS - 1),
            "tx_body": Out(enc.SLICE_BITS),
            "busy": Out(1),
            "accept_valid": Out(1),
            "accept_type": Out(enc.STP_TYPE_BITS),
            "accept_tag": Out(enc.STP_REQ_TAG_BITS),
            "accept_payload": Out(_PAYLOAD),
            "rollover_rx": Out(1),
            "rollover_tick": Out(1),
        }
        members.update({name: Out(enc.STATUS_COUNTER_BITS) for name in COUNTERS})
        super().__init__(members)

    def _fields(self):
        r = self._slots
        return {
            "head": (bits_for(r - 1), 0),
            "count": (bits_for(r), 0),
            "oldest": (_SEQ, 0),
            "next_seq": (_SEQ, 0),
            "replay_num": (2, 0),
            "rt_run": (1, 0),
            "rt": (bits_for(4 * self._replay), 0),
            "rn_valid": (1, 0),
            "rn": (bits_for(r), 0),
            "snd_valid": (1, 0),
            "snd_k": (4, 0),
            "snd_slot": (bits_for(r - 1), 0),
            "snd_crc": (32, 0),
            "next_rcv": (_SEQ, 0),
            "nak_sched": (1, 0),
            "dllp_due": (2, _NONE),
            "unacked": (bits_for(self.p.ack_every), 0),
            "at_run": (1, 0),
            "at": (bits_for(4 * self._ack), 0),
            "rx_pos": (4, 0),
            "rx_stp": (enc.SLICE_BITS, 0),
            "rx_payload": (_PAYLOAD, 0),
            "rx_crc": (32, 0),
            **{name: (enc.STATUS_COUNTER_BITS, 0) for name in COUNTERS},
        }

    @staticmethod
    def _stage(m, cur, name):
        nxt = {k: Signal(len(v), name=f"{name}_{k}") for k, v in cur.items()}
        m.d.comb += [nxt[k].eq(cur[k]) for k in cur]
        return nxt

    def elaborate(self, platform):
        m = Module()
        r = self._slots
        regs = {k: Signal(w, init=i, name=k) for k, (w, i) in self._fields().items()}
        m.submodules.mem = mem = Memory(shape=enc.STP_TYPE_BITS + enc.STP_REQ_TAG_BITS + _PAYLOAD, depth=r, init=[])
        send_port = mem.read_port(domain="comb")
        replay_port = mem.read_port(domain="comb")
        write_port = mem.write_port()

        replay_timeout = Mux(self.low, 4 * self._replay, self._replay)
        ack_timeout = Mux(self.low, 4 * self._ack, self._ack)

        def replay(cur, st, rollover):
            """golden ``_replay`` on stage ``st`` (reading ``cur``); drives ``rollover``."""
            m.d.comb += st["rt_run"].eq(0)
            with m.If(cur["count"] != 0):
                m.d.comb += [
                    st["replays"].eq(cur["replays"] + 1),
                    st["rn"].eq(0),
                    st["rn_valid"].eq(1),
                    st["replay_num"].eq((cur["replay_num"] + 1) % REPLAY_NUM_ROLLOVER),
                ]
                with m.If(cur["replay_num"] == REPLAY_NUM_ROLLOVER - 1):
                    m.d.comb += [st["replay_rollovers"].eq(cur["replay_rollovers"] + 1), rollover.eq(1)]

        # --- Choose the word for this slot (golden ``choose``) ----------------------------------
        s0 = regs
        s1 = self._stage(m, s0, "tx")
        m.d.comb += self.busy.eq(s0["snd_valid"])
        m.d.comb += send_port.addr.eq(s0["snd_slot"])
        sending_payload = send_port.data[enc.STP_TYPE_BITS + enc.STP_REQ_TAG_BITS :]
        data_slice = sending_payload.word_select(s0["snd_k"][:3], enc.SLICE_BITS)
        replay_slot = Signal(len(s0["head"]))
        m.d.comb += [replay_slot.eq(_wrap(s0["head"] + s0["rn"], r)), replay_port.addr.eq(replay_slot)]
        tx_stp = Signal(enc.SLICE_BITS)
        start_slot = Signal(len(s0["head"]))
        with m.If(self.slot):
            with m.If(s0["snd_valid"]):
                with m.If(s0["snd_k"] < enc.SLICES_PER_FRAME):
                    m.d.comb += [
                        self.tx_code.eq(P.TLP_DATA + s0["snd_k"]),
                        self.tx_body.eq(data_slice),
                        s1["snd_k"].eq(s0["snd_k"] + 1),
                        s1["snd_crc"].eq(crc32_advance(m, s0["snd_crc"]) ^ crc32_of_slice(m, data_slice)),
                    ]
                with m.Else():
                    m.d.comb += [
                        self.tx_code.eq(P.LCRC),
                        self.tx_body.eq(s0["snd_crc"] ^ enc.CRC32_XOROUT),
                        s1["snd_valid"].eq(0),
                    ]
                    with m.If(~s0["rt_run"]):
                        m.d.comb += [s1["rt_run"].eq(1), s1["rt"].eq(replay_timeout)]
            with m.Elif(s0["dllp_due"] != _NONE):
                is_nak = s0["dllp_due"] == _NAK
                low = Signal(enc.CTL_BODY_BITS)
                m.d.comb += low.eq((s0["next_rcv"] - 1)[:_SEQ])
                tag = Mux(is_nak, enc.pcie_tag(P.NAK), enc.pcie_tag(P.ACK))
                m.d.comb += [
                    self.tx_code.eq(Mux(is_nak, P.NAK, P.ACK)),
                    self.tx_body.eq(Cat(low, crc16_control(m, tag, low))),
                    s1["dllp_due"].eq(_NONE),
                ]
                with m.If(is_nak):
                    m.d.comb += s1["naks_sent"].eq(s0["naks_sent"] + 1)
                with m.Else():
                    m.d.comb += [s1["unacked"].eq(0), s1["at_run"].eq(0)]
            with m.Elif(s0["rn_valid"]):
                fields = replay_port.data
                m.d.comb += [
                    tx_stp.eq(
                        Cat(
                            _wrap(s0["oldest"] + s0["rn"], 1 << _SEQ)[:_SEQ],
                            fields[: enc.STP_TYPE_BITS],
                            fields[enc.STP_TYPE_BITS : enc.STP_TYPE_BITS + enc.STP_REQ_TAG_BITS],
                        )
                    ),
                    start_slot.eq(replay_slot),
                    s1["rn"].eq(s0["rn"] + 1),
                    s1["tlps_replayed"].eq(s0["tlps_replayed"] + 1),
                ]
                with m.If(s0["rn"] + 1 == s0["count"]):
                    m.d.comb += s1["rn_valid"].eq(0)
                self._start(m, s1, tx_stp, start_slot)
            with m.Elif((s0["count"] < r) & self.new_valid):
                slot = Signal(len(s0["head"]), name="new_slot")
                m.d.comb += [
                    slot.eq(_wrap(s0["head"] + s0["count"], r)),
                    self.new_take.eq(1),
                    write_port.addr.eq(slot),
                    write_port.en.eq(1),
                    write_port.data.eq(Cat(self.new_type, self.new_tag, self.new_payload)),
                    tx_stp.eq(Cat(s0["next_seq"], self.new_type, self.new_tag)),
                    start_slot.eq(slot),
                    s1["next_seq"].eq(s0["next_seq"] + 1),
                    s1["count"].eq(s0["count"] + 1),
                    s1["tlps_sent"].eq(s0["tlps_sent"] + 1),
                ]
                self._start(m, s1, tx_stp, start_slot)
            with m.Else():
                m.d.comb += self.tx_code.eq(P.IDL)

        # --- Receive (golden ``receive``) -------------------------------------------------------
        s2 = self._stage(m, s1, "rx")
        code = Signal(enc.TAG_BITS - 1, name="rx_code")
        m.d.comb += code.eq(self.rx_tag[1:])
        word = Signal(name="rx_word")
        m.d.comb += word.eq(self.rx_valid & self.rx_signal & ~self.rx_malformed)
        body = self.rx_body
        with m.If(self.rx_valid):
            mid = self._stage(m, s1, "rxmid")
            pos = s1["rx_pos"]
            expected = Mux(pos <= enc.SLICES_PER_FRAME, P.TLP_DATA + pos - 1, P.LCRC)
            in_tlp = pos != 0
            matches = Signal(name="rx_matches")
            m.d.comb += matches.eq(in_tlp & word & (code == expected))
            with m.If(in_tlp & ~matches):
                self._bad_tlp(m, s1, mid)
            m.d.comb += [s2[k].eq(mid[k]) for k in mid]
            with m.If(matches):
                with m.If(code == P.LCRC):
                    self._complete(m, s1, s2, body, ack_timeout)
                with m.Else():
                    crc = Signal(32, name="rx_crc_next")
                    m.d.comb += crc.eq(crc32_advance(m, s1["rx_crc"]) ^ crc32_of_slice(m, body))
                    m.d.comb += [
                        s2["rx_pos"].eq(pos + 1),
                        s2["rx_crc"].eq(crc),
                        s2["rx_payload"].word_select((pos - 1)[:3], enc.SLICE_BITS).eq(body),
                    ]
            with m.Elif(~(in_tlp & self.rx_malformed)):
                with m.If(word & (code == P.STP)):
                    m.d.comb += [
                        s2["rx_pos"].eq(1),
                        s2["rx_stp"].eq(body),
                        s2["rx_crc"].eq(crc32_first() ^ crc32_of_slice(m, body)),
                    ]
                with m.Elif(word & ((code == P.ACK) | (code == P.NAK))):
                    self._dllp(m, mid, s2, code, body, replay)
                with m.Elif(self.rx_malformed | (word & (code >= P.TLP_DATA) & (code <= P.LCRC))):
                    self._bad_tlp(m, mid, s2)

        # --- Timers (golden ``tick``) ------------------------------------------------------------
        s3 = self._stage(m, s2, "tick")
        with m.If(self.tick):
            with m.If(s2["at_run"]):
                m.d.comb += s3["at"].eq(s2["at"] - 1)
                with m.If(s2["at"] == 1):
                    m.d.comb += s3["at_run"].eq(0)
                    with m.If((s2["dllp_due"] == _NONE) & (s2["unacked"] != 0)):
                        m.d.comb += s3["dllp_due"].eq(_ACK)
            with m.If(s2["rt_run"]):
                m.d.comb += s3["rt"].eq(s2["rt"] - 1)
                with m.If(s2["rt"] == 1):
                    m.d.comb += s3["replay_timeouts"].eq(s2["replay_timeouts"] + 1)
                    replay(s2, s3, self.rollover_tick)

        # --- Leaving L0, DL_Down ------------------------------------------------------------------
        s4 = self._stage(m, s3, "end")
        with m.If(self.leave_l0):
            m.d.comb += [s4["rx_pos"].eq(0), s4["snd_valid"].eq(0)]
        with m.If(self.reset):
            for k, (_, init) in self._fields().items():
                if k not in COUNTERS:
                    m.d.comb += s4[k].eq(init)
            m.d.comb += s4["tlps_discarded"].eq(s3["tlps_discarded"] + s3["count"])

        m.d.sync += [regs[k].eq(s4[k]) for k in regs]
        m.d.comb += [getattr(self, name).eq(regs[name]) for name in COUNTERS]
        return m

    def _start(self, m, st, stp, slot):
        """The STP of a TLP goes out now; its other words follow from memory slot ``slot``."""
        m.d.comb += [
            self.tx_code.eq(P.STP),
            self.tx_body.eq(stp),
            st["snd_valid"].eq(1),
            st["snd_k"].eq(0),
            st["snd_slot"].eq(slot),
            st["snd_crc"].eq(crc32_first() ^ crc32_of_slice(m, stp)),
        ]

    def _bad_tlp(self, m, cur, st):
        m.d.comb += [st["rx_pos"].eq(0), st["bad_tlps"].eq(cur["bad_tlps"] + 1)]
        with m.If(~cur["nak_sched"]):
            m.d.comb += [st["nak_sched"].eq(1), st["dllp_due"].eq(_NAK)]

    def _complete(self, m, cur, st, lcrc_body, ack_timeout):
        """golden ``_tlp_complete``: the LCRC arrived (``cur`` holds the STP and payload)."""
        stp = cur["rx_stp"]
        good = Signal(name="rx_good")
        m.d.comb += good.eq(
            (lcrc_body == (cur["rx_crc"] ^ enc.CRC32_XOROUT))
            & (stp[enc.STP_RESERVED_LSB :] == 0)
            & (stp[enc.STP_TYPE_LSB : enc.STP_TYPE_LSB + enc.STP_TYPE_BITS] <= enc.TlpType.COMPLETION)
        )
        seq = stp[enc.STP_SEQ_LSB : enc.STP_SEQ_LSB + _SEQ]
        behind = Signal(_SEQ, name="rx_behind")
        m.d.comb += [behind.eq(cur["next_rcv"] - seq), st["rx_pos"].eq(0)]
        with m.If(~good):
            self._bad_tlp(m, cur, st)
        with m.Elif(seq == cur["next_rcv"]):
            unacked = Signal(len(cur["unacked"]) + 1, name="rx_unacked")
            # Saturating: only ">= ack_every" and "!= 0" are ever asked of it.
            m.d.comb += [
                unacked.eq(Mux(cur["unacked"] == self.p.ack_every, self.p.ack_every, cur["unacked"] + 1)),
                st["unacked"].eq(unacked),
                st["next_rcv"].eq(cur["next_rcv"] + 1),
                st["nak_sched"].eq(0),
            ]
            with m.If(~cur["at_run"]):
                m.d.comb += [st["at_run"].eq(1), st["at"].eq(ack_timeout)]
            with m.If((unacked >= self.p.ack_every) & (cur["dllp_due"] == _NONE)):
                m.d.comb += st["dllp_due"].eq(_ACK)
            m.d.comb += [
                self.accept_valid.eq(1),
                self.accept_type.eq(stp[enc.STP_TYPE_LSB : enc.STP_TYPE_LSB + enc.STP_TYPE_BITS]),
                self.accept_tag.eq(stp[enc.STP_REQ_TAG_LSB : enc.STP_REQ_TAG_LSB + enc.STP_REQ_TAG_BITS]),
                self.accept_payload.eq(cur["rx_payload"]),
            ]
        with m.Elif((behind != 0) & (behind < _HALF)):
            m.d.comb += st["duplicate_tlps"].eq(cur["duplicate_tlps"] + 1)
            with m.If(cur["dllp_due"] == _NONE):
                m.d.comb += st["dllp_due"].eq(_ACK)
        with m.Else():
            self._bad_tlp(m, cur, st)

    def _dllp(self, m, cur, st, code, body, replay):
        """golden ``_dllp``: an ACK or NAK arrived."""
        low = body[: enc.CTL_CRC_LSB]
        valid = (low[enc.DLLP_RESERVED_LSB :] == 0) & (body[enc.CTL_CRC_LSB :] == crc16_control(m, self.rx_tag, low))
        seq = body[enc.DLLP_SEQ_LSB : enc.DLLP_SEQ_LSB + _SEQ]
        n = Signal(_SEQ, name="ack_purged")  # TLPs this acknowledges
        m.d.comb += n.eq(seq - cur["oldest"] + 1)
        with m.If(~valid):
            m.d.comb += st["bad_dllps"].eq(cur["bad_dllps"] + 1)
        with m.Elif(n > cur["count"]):
            m.d.comb += st["dllps_out_of_range"].eq(cur["dllps_out_of_range"] + 1)
        with m.Else():
            mid = self._stage(m, cur, "ack")
            left = Signal(len(cur["count"]), name="ack_left")
            m.d.comb += left.eq(cur["count"] - n)
            with m.If(n != 0):
                m.d.comb += [
                    mid["head"].eq(_wrap(cur["head"] + n, self._slots)),
                    mid["count"].eq(left),
                    mid["oldest"].eq(cur["oldest"] + n),
                    mid["replay_num"].eq(0),
                    mid["rt_run"].eq(left != 0),
                    mid["rt"].eq(Mux(self.low, 4 * self._replay, self._replay)),
                ]
                with m.If(cur["rn_valid"]):
                    rn = Signal(len(cur["rn"]), name="ack_rn")
                    m.d.comb += rn.eq(Mux(cur["rn"] > n, cur["rn"] - n, 0))
                    m.d.comb += mid["rn"].eq(rn)
                    with m.If(rn >= left):
                        m.d.comb += mid["rn_valid"].eq(0)
            m.d.comb += [st[k].eq(mid[k]) for k in mid]
            with m.If(code == P.NAK):
                m.d.comb += st["naks_received"].eq(mid["naks_received"] + 1)
                replay(mid, st, self.rollover_rx)
