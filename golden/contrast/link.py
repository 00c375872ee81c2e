"""One end of the PCIe-style contrast link: LTSSM, data link layer, requester and completer on
the 72-bit channel (docs/CONTRAST.md).

Each :meth:`PcieLink.step` is one link clock: the end puts its word on the wire (a function of its
state at the start of the cycle), takes the word that arrived, and advances its timers. User
side: :meth:`offer_frame` queues a 64-byte frame (sent as a posted TLP), ``delivered`` collects
the frames the peer sent, :meth:`request` queues a read request. Beliefs for the ghost meter:
``dl_up`` (DL_Up, which stays 1 through Recovery) and ``requester.completer_alive``.
"""

from collections import deque

from golden import encoding as enc
from golden.contrast.dll import DataLinkLayer
from golden.contrast.ltssm import Ltssm
from golden.contrast.requester import Completer, Requester
from golden.encoding import LtssmState as S
from golden.encoding import PcieCode as P
from golden.encoding import PcieRate, TlpType
from golden.pcie_params import PcieParams


class PcieLink:
    """``params``: a :class:`golden.pcie_params.PcieParams`, or its fields as keyword arguments."""

    def __init__(self, params: PcieParams | None = None, **kwargs):
        self.p = PcieParams.resolve(params, kwargs)
        self.ltssm = Ltssm(self.p)
        self.dll = DataLinkLayer(self.p)
        self.requester = Requester(self.p)
        self.completer = Completer(self.p)
        self.frames_in = deque()  # user frames not yet handed to the data link layer
        self.delivered = []  # frames received from the peer, in order
        self.lost = []  # frames discarded from the replay buffer at DL_Down
        self.now = 0
        self.since_skp = 0  # real words sent since the last SKP
        self.tx_word = None

    # --- User side ------------------------------------------------------------------------------
    def offer_frame(self, frame: bytes) -> None:
        if len(frame) != enc.FRAME_BYTES:
            raise ValueError(f"a frame is {enc.FRAME_BYTES} bytes, not {len(frame)}")
        self.frames_in.append(bytes(frame))

    def request(self) -> int | None:
        return self.requester.request()

    @property
    def dl_up(self) -> bool:
        return self.ltssm.link_up

    @property
    def state(self) -> S:
        return self.ltssm.state

    def counters(self) -> dict:
        return {
            **self.ltssm.counters,
            **self.dll.counters,
            **self.requester.counters,
            "completer_drops": self.completer.dropped,
        }

    # --- One cycle ------------------------------------------------------------------------------
    def step(self, rx_word: int | None, far_receiver: bool = True) -> int | None:
        """Send this cycle's word (returned; None = electrical idle), then take ``rx_word``.
        ``far_receiver``: whether receiver detection would find the peer (Detect.Active)."""
        was_l0, was_up = self.ltssm.state == S.L0, self.ltssm.link_up
        self.dll.divisor = enc.PCIE_LOW_RATE_DIVISOR if self.ltssm.rate == PcieRate.LOW else 1
        self.tx_word = self._transmit()
        self._receive(rx_word)
        if was_l0 and self.ltssm.state == S.L0 and self.dll.tick():
            self.ltssm.direct_recovery("REPLAY_NUM rollover")
        self.ltssm.tick(far_receiver)
        self.requester.tick(self.now)
        if was_l0 and self.ltssm.state != S.L0:
            self.dll.leave_l0()
        if was_up and not self.ltssm.link_up:
            self.lost += [t.payload for t in self.dll.reset() if t.type == TlpType.POSTED]
            self.completer.reset()
        self.now += 1
        return self.tx_word

    def _transmit(self) -> int | None:
        phy = self.ltssm.word()
        if phy is not None and phy[0] == "EI":
            return None
        if self.ltssm.rate == PcieRate.LOW and self.now % enc.PCIE_LOW_RATE_DIVISOR:
            return enc.pcie_word(P.PAD, 0)
        if self.since_skp >= self.p.skp_interval and not self.dll.sending:
            self.since_skp = 0
            return enc.SKP_WORD
        self.since_skp += 1
        if phy is None:
            code, body = self.dll.choose(self._next_tlp)
        else:
            code, body = phy
            self.ltssm.sent_word(code)
        return enc.pcie_word(code, body)

    def _next_tlp(self):
        return (
            self.completer.next_completion(self.now)
            or self.requester.next_request(self.now)
            or ((TlpType.POSTED, 0, self.frames_in.popleft()) if self.frames_in else None)
        )

    def _receive(self, rx_word) -> None:
        code, body = enc.pcie_decode(rx_word)
        if code == P.PAD:
            self.ltssm.saw_pad()
            return
        if code == P.SKP:
            self.ltssm.saw_skp()
            return
        if self.ltssm.state == S.L0:
            tlps, rollover = self.dll.receive(code, body)
            for tlp in tlps:
                if tlp.type == TlpType.POSTED:
                    self.delivered.append(tlp.payload)
                elif tlp.type == TlpType.REQUEST:
                    self.completer.receive(tlp.tag, tlp.payload, self.now)
                else:
                    self.requester.complete(tlp.tag, tlp.payload, self.now)
            if rollover:
                self.ltssm.direct_recovery("REPLAY_NUM rollover")
        # (After a rollover the LTSSM, now in Recovery.RcvrLock, takes the word too: a DLLP, which
        # only breaks its run of training sets.)
        self.ltssm.receive(code, body)
