"""Training of one end in hardware: HELLO, PROBE, READY. Twin of golden/training.py."""

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.encoding import Ctl, LinkState
from golden.params import LinkParams, require


def _lfsr_step(state):
    return Mux(state[0], (state >> 1) ^ enc.NONCE_LFSR_TAPS, state >> 1)


def _f(value, lsb, bits):
    return value[lsb:lsb + bits]


class Training(wiring.Component):
    """HELLO / PROBE / READY state of one end (docs/PROTOCOL.md 2.3).

    Each cycle the endpoint hands over a well-formed training word (``rx_valid``, ``rx_code``,
    ``rx_body``) while it is not UP. Within the clock edge the block does what the golden
    ``Training`` does in one step: receive the word, then retire a lost probe, then choose the
    training word for the next cycle (``tx_code``, ``tx_body``, registers). ``start`` begins a
    new round (``remeasure``: forget the RTT; ``fault``: set the remote-fault flag).
    ``anomaly`` pulses when a word shows the peer began a new round; the block then restarts by
    itself, keeping the RTT. ``ready_to_entangle`` (combinational, after this cycle's word)
    tells the endpoint to reconcile; it answers with ``entangle`` when it goes UP, and ``up``
    while it is UP. ``peer_half`` is then the peer's READY body (``peer_half_rx``: the same after this cycle's word, combinational). ``half_state``: the endpoint's READY bits below
    the heard-ready bit. Latency: registered, one cycle, as in the golden model.

    ``params``: a :class:`golden.params.LinkParams` (port_id, nonce_seed, probes, max_rtt, margin).
    """

    def __init__(self, params: LinkParams):
        require(params)
        p = params
        self._port, self._seed, self._probes, self._max_rtt, self._margin = (
            p.port_id, p.nonce_seed, p.probes, p.max_rtt, p.margin)
        self._rtt_bits = p.rtt_bits
        nonce_seed, port_id = p.nonce_seed, p.port_id
        super().__init__({
            "rx_valid": In(1), "rx_code": In(enc.CONTROL_CODE_BITS), "rx_body": In(enc.CTL_BODY_BITS),
            "start": In(1), "remeasure": In(1), "fault_in": In(1), "up": In(1), "entangle": In(1),
            "half_state": In(enc.READY_HEARD_BIT),
            "phase": Out(2), "rtt": Out(self._rtt_bits), "rtt_valid": Out(1), "leader": Out(1),
            "peer_half": Out(enc.CTL_BODY_BITS), "peer_half_rx": Out(enc.CTL_BODY_BITS), "heard_ready": Out(1), "ready_to_entangle": Out(1),
            "anomaly": Out(1), "ties": Out(enc.STATUS_COUNTER_BITS),
            "tx_code": Out(enc.CONTROL_CODE_BITS, init=Ctl.TRAIN_HELLO),
            "tx_body": Out(enc.CTL_BODY_BITS, init=(nonce_seed & ((1 << enc.NONCE_BITS) - 1))
                           | port_id << enc.HELLO_PORT_LSB),
        })

    def elaborate(self, platform):
        m = Module()
        W = self._rtt_bits
        # --- state registers ----------------------------------------------------------------
        lfsr = Signal(enc.NONCE_LFSR_BITS, init=self._seed)
        fault = Signal()
        peer_nonce, peer_port = Signal(enc.NONCE_BITS), Signal(enc.PORT_ID_BITS)
        heard, left = Signal(), Signal()
        number, outstanding, age = Signal(enc.PROBE_NUMBER_BITS), Signal(), Signal(W)
        done, max_sample, have_sample = Signal(range(self._probes + 1)), Signal(W), Signal()
        echo_due, echo_body = Signal(), Signal(enc.CTL_BODY_BITS)
        peer_heard_me, sent_heard = Signal(), Signal()
        cycle_odd = Signal()                       # parity of the current cycle number
        nonce = lfsr[:enc.NONCE_BITS]
        body, code = self.rx_body, self.rx_code
        m.d.sync += cycle_odd.eq(~cycle_odd)

        # --- stage 1: receive -----------------------------------------------------------------
        # Every register the receive stage may change; later stages refine a few of them.
        regs = {"phase": self.phase, "lfsr": lfsr, "heard": heard, "peer_nonce": peer_nonce,
                "peer_port": peer_port, "leader": self.leader, "left": left, "echo_due": echo_due,
                "echo_body": echo_body, "outstanding": outstanding, "number": number, "done": done,
                "max_sample": max_sample, "have_sample": have_sample, "rtt": self.rtt,
                "rtt_valid": self.rtt_valid, "peer_half": self.peer_half, "heard_ready": self.heard_ready,
                "peer_heard_me": peer_heard_me, "ties": self.ties}
        r = {name: Signal.like(sig, name=f"r_{name}") for name, sig in regs.items()}
        m.d.comb += [r[name].eq(sig) for name, sig in regs.items()]
        m.d.comb += self.peer_half_rx.eq(r["peer_half"])

        def after_hello():
            return Mux(self.rtt_valid, LinkState.READY, LinkState.PROBE)

        pn, pport = _f(body, enc.HELLO_NONCE_LSB, enc.NONCE_BITS), _f(body, enc.HELLO_PORT_LSB, enc.PORT_ID_BITS)
        with m.If(self.rx_valid & ~self.up):
            with m.Switch(code):
                with m.Case(Ctl.TRAIN_HELLO):
                    with m.If(self.phase != LinkState.HELLO):
                        m.d.comb += self.anomaly.eq(pn != peer_nonce)
                    with m.Elif((pn == nonce) & (pport == self._port)):
                        m.d.comb += [r["ties"].eq(self.ties + 1), r["lfsr"].eq(_lfsr_step(lfsr)), r["heard"].eq(0)]
                    with m.Else():
                        m.d.comb += [r["peer_nonce"].eq(pn), r["peer_port"].eq(pport), r["heard"].eq(1),
                                     r["leader"].eq((nonce > pn) | ((nonce == pn) & (self._port > pport)))]
                        with m.If(_f(body, enc.HELLO_HEARD_BIT, 1)
                                  & (_f(body, enc.HELLO_PEER_NONCE_LSB, enc.NONCE_BITS) == nonce)):
                            m.d.comb += r["phase"].eq(after_hello())
                with m.Case(Ctl.TRAIN_PROBE):
                    with m.If(heard & (_f(body, enc.PROBE_NONCE_LSB, enc.NONCE_BITS) == peer_nonce)):
                        m.d.comb += [r["left"].eq(1), r["echo_due"].eq(1), r["echo_body"].eq(body)]
                        with m.If(self.phase == LinkState.HELLO):
                            m.d.comb += r["phase"].eq(after_hello())
                with m.Case(Ctl.TRAIN_PROBE_ECHO):
                    mine = _f(body, enc.PROBE_NONCE_LSB, enc.NONCE_BITS) == nonce
                    with m.If(mine):
                        m.d.comb += r["left"].eq(1)
                    with m.If(mine & (self.phase == LinkState.PROBE) & outstanding
                              & (_f(body, enc.PROBE_NUMBER_LSB, enc.PROBE_NUMBER_BITS) == number)):
                        new_max = Mux(have_sample & (max_sample > age), max_sample, age)
                        m.d.comb += [r["outstanding"].eq(0), r["number"].eq(number + 1), r["done"].eq(done + 1),
                                     r["max_sample"].eq(new_max), r["have_sample"].eq(1)]
                        with m.If(done + 1 == self._probes):
                            m.d.comb += [r["rtt"].eq(new_max), r["rtt_valid"].eq(1),
                                         r["phase"].eq(LinkState.READY)]
                with m.Case(Ctl.TRAIN_READY):
                    with m.If(heard & (_f(body, enc.READY_NONCE_LSB, enc.READY_NONCE_BITS)
                                       == peer_nonce[:enc.READY_NONCE_BITS])):
                        m.d.comb += [r["peer_half"].eq(body), r["heard_ready"].eq(1), r["left"].eq(1)]
                        with m.If(_f(body, enc.READY_HEARD_BIT, 1)):
                            m.d.comb += r["peer_heard_me"].eq(1)

        # A new round (the endpoint's, or this block's own anomaly): as golden Training.start.
        restart = self.start | self.anomaly
        remeasure = self.start & self.remeasure
        n = {k: Signal.like(v, name=f"n_{k}") for k, v in r.items()}
        n_fault = Signal()
        n_sent_heard = Signal()
        with m.If(restart):
            m.d.comb += [n[k].eq(0) for k in ("heard", "peer_nonce", "peer_port", "leader", "left", "echo_due",
                                             "echo_body", "outstanding", "number", "done", "max_sample",
                                             "have_sample", "peer_half", "heard_ready", "peer_heard_me")]
            m.d.comb += [n["phase"].eq(LinkState.HELLO), n["lfsr"].eq(_lfsr_step(lfsr)),
                         n["rtt"].eq(Mux(remeasure, 0, self.rtt)), n["rtt_valid"].eq(self.rtt_valid & ~remeasure),
                         n["ties"].eq(self.ties), n_fault.eq(self.start & self.fault_in), n_sent_heard.eq(0)]
        with m.Else():
            m.d.comb += [n[k].eq(v) for k, v in r.items()]
            m.d.comb += [n_fault.eq(fault), n_sent_heard.eq(sent_heard)]

        # Judged after this cycle's word, as the golden endpoint does within one step.
        m.d.comb += self.ready_to_entangle.eq(~self.up & ~restart & (n["phase"] == LinkState.READY)
                                              & n["heard_ready"] & n["peer_heard_me"] & sent_heard)
        # The word for the next cycle is a training word unless the end is UP then.
        going_up = (self.up & ~self.start) | self.entangle

        # --- stage 2: a probe not answered within its bound was lost ----------------------------
        bound = Mux(n["have_sample"], n["max_sample"] + self._margin, self._max_rtt)
        lost = ~self.up & ~restart & ~self.entangle & (n["phase"] == LinkState.PROBE) & n["outstanding"] & (age > bound)
        t_out = Signal()
        t_number = Signal(enc.PROBE_NUMBER_BITS)
        m.d.comb += [t_out.eq(n["outstanding"] & ~lost), t_number.eq(Mux(lost, n["number"] + 1, n["number"]))]

        # --- stage 3: the training word of the next cycle ------------------------------------
        next_odd = ~cycle_odd
        n_nonce = n["lfsr"][:enc.NONCE_BITS]
        s_echo_due, s_out, s_sent = Signal(), Signal(), Signal()
        m.d.comb += [s_echo_due.eq(n["echo_due"]), s_out.eq(t_out), s_sent.eq(n_sent_heard)]
        sending_probe = Signal()
        with m.If(~going_up):
            with m.If(n["echo_due"]):
                m.d.sync += [self.tx_code.eq(Ctl.TRAIN_PROBE_ECHO), self.tx_body.eq(n["echo_body"])]
                m.d.comb += s_echo_due.eq(0)
            with m.Elif((n["phase"] == LinkState.PROBE) & ~t_out):
                m.d.sync += [self.tx_code.eq(Ctl.TRAIN_PROBE),
                             self.tx_body.eq(t_number << enc.PROBE_NUMBER_LSB | n_nonce << enc.PROBE_NONCE_LSB)]
                m.d.comb += [s_out.eq(1), sending_probe.eq(1)]
            with m.Elif((n["phase"] == LinkState.READY) & (n["left"] | ~next_odd)):
                m.d.sync += [self.tx_code.eq(Ctl.TRAIN_READY),
                             self.tx_body.eq(self.half_state | n["heard_ready"] << enc.READY_HEARD_BIT
                                             | n_nonce[:enc.READY_NONCE_BITS] << enc.READY_NONCE_LSB)]
                m.d.comb += s_sent.eq(n_sent_heard | n["heard_ready"])
            with m.Else():
                m.d.sync += [self.tx_code.eq(Ctl.TRAIN_HELLO),
                             self.tx_body.eq(n_nonce << enc.HELLO_NONCE_LSB
                                             | n["peer_nonce"] << enc.HELLO_PEER_NONCE_LSB
                                             | n["heard"] << enc.HELLO_HEARD_BIT
                                             | Const(self._port << enc.HELLO_PORT_LSB, enc.CTL_BODY_BITS)
                                             | n_fault << enc.HELLO_FAULT_BIT)]

        # --- commit -----------------------------------------------------------------------------
        # echo_due, outstanding and number leave through the later stages, below.
        m.d.sync += [sig.eq(n[k]) for k, sig in regs.items() if k not in ("echo_due", "outstanding", "number")]
        m.d.sync += [fault.eq(n_fault), echo_due.eq(s_echo_due), outstanding.eq(s_out), number.eq(t_number),
                     sent_heard.eq(s_sent), age.eq(Mux(sending_probe, 0, Mux(age.all(), age, age + 1)))]
        return m
