"""Wire encodings of the OAE link, defined once (normative text: docs/PROTOCOL.md, section 1).

This module is the single source of every tag code, state code and field width. It imports
nothing but the standard library so that both the golden models and the Amaranth RTL can use
it; it holds numbers and pure functions on numbers, never behaviour.
"""

from enum import IntEnum

SLICE_BITS = 64
TAG_BITS = 8
WORD_BITS = SLICE_BITS + TAG_BITS
SLICES_PER_FRAME = 8
FRAME_BYTES = SLICES_PER_FRAME * SLICE_BITS // 8

CLASS_BITS = 2
MAX_CLASSES = 1 << CLASS_BITS
INDEX_BITS = 3
CONTROL_CODE_BITS = 5

# Tag bit positions (bit 0 is the parity bit of every tag).
PARITY_BIT = 0
DATA_FLAG_BIT = 7
DATA_CLASS_LSB = 5
DATA_INDEX_LSB = 2
DATA_LAST_BIT = 1
ECHO_PREFIX = 0b01  # tag[7:6] of an ECHO word
ECHO_CLASS_LSB = 4
ECHO_INDEX_LSB = 1
CONTROL_PREFIX = 0b00  # tag[7:6] of a CONTROL word
CONTROL_CODE_LSB = 1


class Kind(IntEnum):
    """What a decoded word is. MALFORMED words are counted and dropped, never acted on."""

    MALFORMED = 0
    DATA = 1
    ECHO = 2
    CONTROL = 3


class Ctl(IntEnum):
    """CONTROL word codes (tag[5:1]). Codes not listed here are reserved: malformed."""

    IDLE = 0x01
    # Training (replaces the LTSSM): detect and exchange nonces, RTT probes, half-states.
    TRAIN_HELLO = 0x02
    TRAIN_PROBE = 0x04
    TRAIN_PROBE_ECHO = 0x05
    TRAIN_READY = 0x06
    # Token plane: the circulating token and the atomic token transfer with its reverse moves.
    TICK = 0x08
    TOCK = 0x09
    AIT_OFFER = 0x0A
    AIT_ACCEPT = 0x0B
    AIT_COMMIT = 0x0C
    AIT_REJECT = 0x0D
    AIT_RETRACT = 0x0E
    # Data plane: the digest of one received frame, and frame-level recovery (go-back-N).
    DIGEST = 0x10
    RESYNC = 0x11  # the sender resends from its first unconfirmed frame of every class
    RESYNC_ACK = 0x12  # the receiver has rewound: returns before this word are stale
    NAK = 0x13  # the receiver lost a slice: please resync
    REPLAY = 0x14  # selective repeat: the next frame of a class replaces one the receiver holds


TRAINING_CODES = frozenset(c for c in Ctl if 0x02 <= c <= 0x07)
TOKEN_CODES = frozenset(c for c in Ctl if 0x08 <= c <= 0x0F)
RECOVERY_CODES = frozenset((Ctl.RESYNC, Ctl.RESYNC_ACK, Ctl.NAK, Ctl.REPLAY))


def parity_bit(info7: int) -> int:
    """The bit 0 value that gives the whole tag odd parity, for tag bits [7:1] = info7."""
    if not 0 <= info7 < 1 << (TAG_BITS - 1):
        raise ValueError(f"info7 must be a 7-bit value, not {info7!r}")
    return 1 ^ (bin(info7).count("1") & 1)


# --- Control word payloads (docs/PROTOCOL.md, section 2) ----------------------------------------
# Every CONTROL word but IDLE carries a CRC-16 in slice bits [63:48], computed over the tag and
# slice bits [47:0]; a word whose CRC fails is malformed. IDLE's slice MUST be zero.

CTL_CRC_LSB = 48
CTL_CRC_BITS = 16
CTL_BODY_BITS = 48
CRC16_POLY = 0x1021  # CRC-16/CCITT-FALSE: init 0xFFFF, no reflection, no final xor
CRC16_INIT = 0xFFFF

# Frame sequences and commit counts: the counts of every class share COUNTS_BITS of the token,
# READY and RESYNC bodies, so their width depends on the build's number of classes (count_bits).
COUNTS_BITS = 24
MAX_COUNT_BITS = 12  # the DIGEST's sequence field; a window of 2047 frames is 128 KiB
AIT_SEQ_BITS = 4
AIT_VALUE_BITS = 16
PHASE_BITS = 2  # TxPhase and RxPhase codes
NONCE_BITS = 16  # a training nonce: the low bits of the nonce LFSR
NONCE_LFSR_BITS = 32  # Galois LFSR that draws nonces (PROTOCOL.md 2.3)
NONCE_LFSR_TAPS = 0x80200003
PORT_ID_BITS = 8
PROBE_NUMBER_BITS = 16
DIGEST_CRC_BITS = 32
CRC32_POLY_REFLECTED = 0xEDB88320  # frame digest: IEEE 802.3 CRC-32, as zlib.crc32
CRC32_INIT = 0xFFFFFFFF
CRC32_XOROUT = 0xFFFFFFFF
STATUS_COUNTER_BITS = 16  # event counters on an endpoint's status port wrap at 2**16
# The event counters of an end, golden (``golden.link.core.Counters``) and RTL (``status.counters``).
STATUS_COUNTERS = (
    "malformed",
    "anomalies",
    "suspicions",
    "trainings",
    "ties",
    "reconcile_conflicts",
    "frames_sent",
    "frames_delivered",
    "slices_sent",
    "probes_late",
    "recoveries",
    "token_asks",
)


def count_bits(num_classes: int) -> int:
    """Width of frame sequences and commit counts on the wire for ``num_classes`` classes:
    12 bits for one or two classes, 8 for three, 6 for four (PROTOCOL.md 2.1)."""
    if not 1 <= num_classes <= MAX_CLASSES:
        raise ValueError(f"num_classes must be an integer in [1, {MAX_CLASSES}], not {num_classes!r}")
    return min(MAX_COUNT_BITS, COUNTS_BITS // num_classes)


class FieldTable:
    """The fields of one control word body, packed from bit 0 up in the order given.

    ``widths`` is an ordered ``{field: width}``: the first field is at bit 0, each next one just
    above the last. The bits from the end of the last field up to ``bits`` (the body's width,
    CTL_BODY_BITS) are reserved: they MUST be zero on the wire (PROTOCOL.md 2.1). The golden
    model reads and builds bodies with :meth:`get` and :meth:`pack`; the RTL builds its
    ``data`` layouts from :attr:`fields` (``rtl.common.fields.layout``).
    """

    __slots__ = ("name", "bits", "_widths", "_lsbs", "_at", "reserved_lsb")

    def __init__(self, name: str, widths: dict, bits: int = CTL_BODY_BITS):
        lsbs, lsb = {}, 0
        for field_name, width in widths.items():
            if not field_name.isidentifier() or field_name == "reserved":
                raise ValueError(f"{name}: {field_name!r} is not a field name")
            if not isinstance(width, int) or width <= 0:
                raise ValueError(f"{name}.{field_name}: width must be a positive integer, not {width!r}")
            lsbs[field_name], lsb = lsb, lsb + width
        if lsb > bits:
            raise ValueError(f"{name}: fields of {lsb} bits do not fit a {bits}-bit body")
        self.name, self.bits = name, bits
        self._widths, self._lsbs = dict(widths), lsbs
        # (lsb, mask) per field: get() is on the golden model's per-cycle path.
        self._at = {n: (lsbs[n], (1 << w) - 1) for n, w in widths.items()}
        self.reserved_lsb = lsb  # bits [bits - 1 : reserved_lsb] MUST be zero

    def __repr__(self):
        return f"FieldTable({self.name!r}, {self._widths!r})"

    def __eq__(self, other):
        return isinstance(other, FieldTable) and (self.name, self.bits, tuple(self._widths.items())) == (
            other.name,
            other.bits,
            tuple(other._widths.items()),
        )

    def __hash__(self):
        return hash((self.name, self.bits, tuple(self._widths.items())))

    @property
    def fields(self) -> tuple:
        """``(name, lsb, width)`` of every field, from bit 0 up."""
        return tuple((name, self._lsbs[name], width) for name, width in self._widths.items())

    @property
    def reserved_mask(self) -> int:
        """The body bits that MUST be zero."""
        return ((1 << self.bits) - 1) & ~((1 << self.reserved_lsb) - 1)

    def _check(self, name: str) -> None:
        if name not in self._widths:
            raise KeyError(f"{self.name} has no field {name!r}")

    def lsb(self, name: str) -> int:
        self._check(name)
        return self._lsbs[name]

    def width(self, name: str) -> int:
        self._check(name)
        return self._widths[name]

    def get(self, body: int, name: str) -> int:
        """Field ``name`` of ``body``."""
        try:
            lsb, mask = self._at[name]
        except KeyError:
            raise KeyError(f"{self.name} has no field {name!r}") from None
        return (body >> lsb) & mask

    def pack(self, **values) -> int:
        """The body with the fields given (the others zero). Raises ValueError naming a field
        whose value does not fit it."""
        body = 0
        for name, value in values.items():
            self._check(name)
            width = self._widths[name]
            if not isinstance(value, int) or not 0 <= value < 1 << width:
                raise ValueError(f"{self.name}.{name} is {width} bits wide: {value!r} does not fit")
            body |= int(value) << self._lsbs[name]
        return body


# Token-plane word body (TICK, TOCK, AIT_*): the commit counts [23:0] (class c at [k(c+1)-1:kc],
# k = count_bits(num_classes), class_count_field; bits up to 23 beyond the classes are zero),
# AIT sequence [27:24], AIT value [43:28], copies wanted [44] ("send me copies": the sender saw
# malformed words lately, PROTOCOL.md 3.1), copy [45] (this word is the copy of the token word
# sent before it), turn [46] (parity of the sender's token words in the session; a copy has its
# original's), again [47] (with copy: the sender asks for the peer's last token word, which it
# lost, PROTOCOL.md 3.1).
TOKEN_BODY = FieldTable(
    "TOKEN",
    {
        "counts": COUNTS_BITS,
        "ait_seq": AIT_SEQ_BITS,
        "ait_value": AIT_VALUE_BITS,
        "copies": 1,
        "copy": 1,
        "turn": 1,
        "again": 1,
    },
)

# TRAIN_HELLO body: my nonce [15:0], the peer nonce I heard [31:16], heard flag [32],
# my port id [40:33], remote fault flag [41] (this training began with an RLFD suspicion),
# keep-RTT flag [42] (with the fault flag: the token was lost to corruption, not to a longer
# round trip, so neither end measures again), resume flag [43] (this round follows a suspicion
# of the session tagged [47:44], which the end would resume, PROTOCOL.md 2.3).
HELLO_BODY = FieldTable(
    "TRAIN_HELLO",
    {
        "nonce": NONCE_BITS,
        "peer_nonce": NONCE_BITS,
        "heard": 1,
        "port": PORT_ID_BITS,
        "fault": 1,
        "keep": 1,
        "resume": 1,
        "session": 4,
    },
)


# The check frame of training (PROTOCOL.md 2.3): slice i of class c is the sender's nonce in each
# 16-bit lane, XOR (c << 3 | i) in the low bits.
CHECK_LANES = SLICE_BITS // NONCE_BITS


def check_slice(nonce: int, cls: int, index: int) -> int:
    """Slice ``index`` of the check frame of class ``cls`` an end with ``nonce`` sends."""
    lanes = 0
    for k in range(CHECK_LANES):
        lanes |= nonce << (k * NONCE_BITS)
    return lanes ^ (cls << INDEX_BITS | index)


def session_tag(nonce: int, peer_nonce: int) -> int:
    """The tag of the session two ends entangle in: the low bits of their nonces' XOR, the same
    at both ends (PROTOCOL.md 2.3)."""
    return (nonce ^ peer_nonce) & ((1 << HELLO_BODY.width("session")) - 1)


# TRAIN_PROBE / TRAIN_PROBE_ECHO body: probe number [15:0], sender nonce [31:16]; rest zero.
PROBE_BODY = FieldTable("TRAIN_PROBE", {"number": PROBE_NUMBER_BITS, "nonce": NONCE_BITS})

# TRAIN_READY body: the half-state. AIT sender phase [1:0], AIT sender seq [5:2],
# AIT receiver phase [7:6], AIT receiver seq [11:8], confirmed counts [35:12] (class c at
# [12+k(c+1)-1 : 12+kc]), heard-ready flag [36], my nonce [47:37] (low 11 bits). Every bit used.
READY_BODY = FieldTable(
    "TRAIN_READY",
    {
        "tx_phase": PHASE_BITS,
        "tx_seq": AIT_SEQ_BITS,
        "rx_phase": PHASE_BITS,
        "rx_seq": AIT_SEQ_BITS,
        "counts": COUNTS_BITS,
        "heard": 1,
        "nonce": 11,
    },
)

# DIGEST body: CRC-32 of the received frame [31:0], frame sequence [43:32] (count_bits wide,
# the bits above zero), class [45:44]; [47:46] zero.
DIGEST_BODY = FieldTable("DIGEST", {"crc": DIGEST_CRC_BITS, "seq": MAX_COUNT_BITS, "cls": CLASS_BITS})

# RESYNC body: the sender's confirmed count (or resume point) of class c at [k(c+1)-1:kc] in the
# counts [23:0] (as on a token word), resync number [31:24]; [47:32] zero.
RESYNC_BODY = FieldTable("RESYNC", {"counts": COUNTS_BITS, "number": 8})

# RESYNC_ACK body: the resync number [7:0]; [47:8] zero.
RESYNC_ACK_BODY = FieldTable("RESYNC_ACK", {"number": RESYNC_BODY.width("number")})

# NAK has no body: [47:0] zero.
NAK_BODY = FieldTable("NAK", {})

# REPLAY body: the sequence of the frame replaced [11:0] (count_bits wide, the bits above zero),
# class [13:12]; [47:14] zero.
REPLAY_BODY = FieldTable("REPLAY", {"seq": MAX_COUNT_BITS, "cls": CLASS_BITS})

# The body table of every control word but IDLE (which has no body: its whole slice MUST be zero).
BODY_TABLES = {
    Ctl.TRAIN_HELLO: HELLO_BODY,
    Ctl.TRAIN_PROBE: PROBE_BODY,
    Ctl.TRAIN_PROBE_ECHO: PROBE_BODY,
    Ctl.TRAIN_READY: READY_BODY,
    **{code: TOKEN_BODY for code in sorted(TOKEN_CODES)},
    Ctl.DIGEST: DIGEST_BODY,
    Ctl.RESYNC: RESYNC_BODY,
    Ctl.RESYNC_ACK: RESYNC_ACK_BODY,
    Ctl.NAK: NAK_BODY,
    Ctl.REPLAY: REPLAY_BODY,
}


def class_count_field(c: int, num_classes: int) -> tuple:
    """``(lsb, width)`` of class ``c``'s count inside a counts field (``TOKEN_BODY``,
    ``READY_BODY``, ``RESYNC_BODY``): count_bits(num_classes) bits at [k(c+1)-1 : kc]; the bits
    of the field above the last class are zero (PROTOCOL.md 2.1)."""
    k = count_bits(num_classes)
    if not 0 <= c < num_classes:
        raise ValueError(f"class must be in [0, {num_classes}), not {c!r}")
    return k * c, k


class TxPhase(IntEnum):
    """The sender's half of the atomic token transfer (one transfer at a time per direction)."""

    NONE = 0  # no transfer since training, or the last one was rejected
    OFFERED = 1  # AIT_OFFER sent, balance -1, no answer yet
    COMMITTED = 2  # AIT_COMMIT sent: the token belongs to the receiver
    RETRACTED = 3  # AIT_RETRACT sent: the token came back to the sender


class RxPhase(IntEnum):
    """The receiver's half of the atomic token transfer."""

    NONE = 0  # nothing accepted since training
    ACCEPTED = 1  # AIT_ACCEPT sent, balance +1, value held, not yet delivered
    DELIVERED = 2  # AIT_COMMIT received, value delivered to the user
    DROPPED = 3  # AIT_RETRACT received, value discarded


# Balance carried by a token-plane word in flight (docs/PROTOCOL.md, section 3.3).
WORD_BALANCE = {
    Ctl.TICK: 0,
    Ctl.TOCK: 0,
    Ctl.AIT_OFFER: +1,  # carries the token
    Ctl.AIT_ACCEPT: 0,
    Ctl.AIT_COMMIT: -1,  # cancels the receiver's +1
    Ctl.AIT_REJECT: +1,  # returns the token
    Ctl.AIT_RETRACT: -1,  # cancels the receiver's +1
}


class LinkState(IntEnum):
    """Endpoint link state (status output)."""

    HELLO = 0  # training: detect the peer, exchange nonces
    PROBE = 1  # training: measure RTT
    READY = 2  # training: exchange half-states, reconcile
    UP = 3  # entangled: token circulating, data flowing


class Reason(IntEnum):
    """Why an end suspects its link (PROTOCOL.md 5.2; status output with each suspicion)."""

    NONE = 0
    LOSS_OF_SIGNAL = 1
    TOKEN_OVERDUE = 2
    REMOTE_FAULT = 3  # the peer's HELLO carries the remote-fault flag
    DEGRADED = 4  # frame-level recovery failed RECOVERY_LIMIT times in a row (PROTOCOL.md 4.6)
    TOKEN_EARLY = 5  # a token arrived before RTT - margin: the round trip is not the one measured

    def __str__(self):
        return self.name.lower().replace("_", " ")


# Lowest reserved body bit of each control word: bits [47:lsb] MUST be zero (48 = none).
# IDLE has no body at all: its whole slice MUST be zero.
RESERVED_LSB = {code: table.reserved_lsb for code, table in BODY_TABLES.items()}


def returned_words_per_frame(full_echo: bool) -> int:
    """Words a receiver owes back per frame: its DIGEST, plus an ECHO per slice in full mode."""
    return 1 + (SLICES_PER_FRAME if full_echo else 0)


def return_queue_entries(num_classes: int, window: int, full_echo: bool) -> int:
    """The most words one end can owe its peer, or expect back from it, at once (PROTOCOL.md 4.5):
    the returns of the frames the window lets the peer have unconfirmed, ``window`` per class."""
    return num_classes * window * returned_words_per_frame(full_echo)


def echo_slack(num_classes: int, window: int, full_echo: bool, fill_interval: int = 256) -> int:
    """Cycles a returned word may wait in the peer's reverse queue (PROTOCOL.md 4.5): 3Q + 2,
    plus a fill word every ``fill_interval`` cycles of it."""
    wait = 3 * return_queue_entries(num_classes, window, full_echo) + 2
    return wait + -(-wait // (fill_interval - 1))


def field(value: int, lsb: int, bits: int) -> int:
    """Bits [lsb + bits - 1 : lsb] of ``value``: for the fabric's node header and message fields
    below (control word bodies have their FieldTable)."""
    return (value >> lsb) & ((1 << bits) - 1)


def reserved_mask(code: int) -> int:
    """The body bits of control word ``code`` that MUST be zero."""
    return BODY_TABLES[code].reserved_mask


# --- The fabric (PROTOCOL.md 10.2, 10.3) ------------------------------------------------------
# A node frame: slice 0 the node header, slices 1-7 the payload (user data or a control message).

NODE_ID_BITS = 8
MAX_NODES = 1 << NODE_ID_BITS
NODE_PAYLOAD_BYTES = FRAME_BYTES - SLICE_BITS // 8  # slices 1-7


class NodeKind(IntEnum):
    """What a node frame carries (header bits 1:0; 3 is malformed)."""

    USER = 0
    CONTROL = 1
    ACK = 2  # an end-to-end acknowledgement (PROTOCOL.md 10.7): not numbered itself


E2E_SEQ_BITS = 32
# Slice 0 of every node frame (PROTOCOL.md 10.2); bits 63:52 zero.
NODE_HEADER = FieldTable(
    "node header",
    {"kind": 2, "origin": NODE_ID_BITS, "dest": NODE_ID_BITS, "cls": CLASS_BITS, "seq": E2E_SEQ_BITS},
    bits=SLICE_BITS,
)
# An ACK's slice 1 (10.3): the kind of the stream it acknowledges (USER or CONTROL), the rest zero.
ACK_BODY = FieldTable("ACK slice 1", {"stream": 2}, bits=SLICE_BITS)


class MsgType(IntEnum):
    """Control message types (message slice 1, bits 3:0; other values are malformed)."""

    REPORT = 1
    VERDICT = 2


LINK_ID_BITS = 8
INCIDENT_BITS = 16
SESSION_BITS = 16
EPOCH_BITS = 32
# Slice 1 of a control message (10.3) starts with the same three fields in both types.
MSG_HEAD = {"type": 4, "link": LINK_ID_BITS, "writer": NODE_ID_BITS}
REPORT_HEAD = FieldTable(
    "REPORT slice 1",
    {
        **MSG_HEAD,
        "up": 1,  # 0: the port left UP; 1: it entered UP
        "hears": 1,  # the port applied a well-formed word in its last los_cycles cycles
        "incident": INCIDENT_BITS,
        "session": SESSION_BITS,
    },
    bits=SLICE_BITS,
)
HALF_STATE_BITS = READY_BODY.lsb("heard")  # a REPORT's slice 2: the READY body below the heard-ready bit


class Verdict(IntEnum):
    """An arbiter's verdict on a link (VERDICT slice 1, bits 23:20)."""

    NONE = 0  # the suspicion healed: nothing to commit
    LINK_DOWN = 1  # both ends alive, each suspects the link
    LINK_UP = 2  # a link held DOWN works again at both ends: admitted
    NODE_DOWN = 3  # the subject is silent on every link: dead, or cut off both ways
    UNREACHABLE = 4  # the subject is cut off from both others but heard on some link


VERDICT_HEAD = FieldTable(
    "VERDICT slice 1",
    {**MSG_HEAD, "verdict": 4, "subject": NODE_ID_BITS, "epoch": EPOCH_BITS},
    bits=SLICE_BITS,
)
# The frame slices a control message fills: 1-5 (a LINK_DOWN's two REPORTs end at slice 5);
# slices 6 and 7 of a well-formed one are zero (PROTOCOL.md 10.3).
CONTROL_MESSAGE_SLICES = 5


# --- The PCIe-style contrast link (docs/CONTRAST.md 2) -------------------------------------------
# The same 72-bit word and odd-parity tag as OAE; tag[7:1] is a 7-bit code of its own, so a tag
# hit by one bit error is malformed (a framing error) on this link too.


class PcieCode(IntEnum):
    """Word codes of the contrast link (tag[7:1]). Codes not listed are malformed."""

    PAD = 0x01  # an unused slot at the lower rate (the rate is modelled as goodput)
    SKP = 0x02  # the fill word: an elastic buffer inserts and deletes it
    IDL = 0x03  # logical idle
    TS1 = 0x04  # training sets (ordered sets; no CRC, as in PCIe)
    TS2 = 0x05
    EIOS = 0x06  # electrical idle ordered set: the sender goes quiet on purpose
    STP = 0x08  # a TLP's first word: sequence number, type, request tag
    TLP_DATA = 0x10  # 0x10 + k: slice k (0..7) of the TLP's 64-byte payload
    LCRC = 0x18  # a TLP's last word: CRC-32 over the STP slice and the payload
    ACK = 0x20  # DLLPs: sequence number, CRC-16
    NAK = 0x21


PCIE_CODES = frozenset(PcieCode) | frozenset(range(PcieCode.TLP_DATA, PcieCode.TLP_DATA + SLICES_PER_FRAME))
PCIE_TLP_WORDS = 2 + SLICES_PER_FRAME  # STP, eight payload slices, LCRC
PCIE_SEQ_BITS = 12  # the TLP sequence number (PCIe: 12 bits)

# Training set slice (TS1, TS2).
TS_LINK_LSB = 0  # link number; TS_LINK_PAD = not yet configured
TS_LINK_BITS = 8
TS_LINK_PAD = 0xFF
TS_RATE_LSB = 8  # the highest rate the sender supports (PcieRate)
TS_RATE_BITS = 2
TS_RESERVED_LSB = 10  # reserved bits must be 0: a training set with any set is ignored

# STP slice.
STP_SEQ_LSB = 0
STP_TYPE_LSB = 12
STP_TYPE_BITS = 2
STP_REQ_TAG_LSB = 14
STP_REQ_TAG_BITS = 8
STP_RESERVED_LSB = 22

# LCRC slice: CRC-32 (as zlib) over the 72 bytes of the STP slice and the payload, little-endian.
LCRC_LSB = 0
LCRC_RESERVED_LSB = 32

# ACK / NAK slice: the sequence number acknowledged (NAK: the last one received good), and the
# same CRC-16 as OAE control words in bits [63:48] over the tag and bits [47:0].
DLLP_SEQ_LSB = 0
DLLP_RESERVED_LSB = PCIE_SEQ_BITS


class TlpType(IntEnum):
    POSTED = 0  # a memory write: carries one user frame, no completion
    REQUEST = 1  # a read request: the completer answers with a COMPLETION
    COMPLETION = 2


class PcieRate(IntEnum):
    """Link rates as goodput: at the lowest rate one slot in PCIE_LOW_RATE_DIVISOR carries a
    word, the others PAD (2.5 GT/s with 8b/10b against 8 GT/s with 128b/130b: 2.0 / 7.88)."""

    LOW = 0
    FULL = 1


PCIE_LOW_RATE_DIVISOR = 4


class LtssmState(IntEnum):
    """LTSSM states of the contrast link, with the substates kept (docs/CONTRAST.md 3)."""

    DETECT_QUIET = 0
    DETECT_ACTIVE = 1
    POLLING_ACTIVE = 2
    POLLING_CONFIG = 3
    CONFIG_LINKWIDTH = 4  # Linkwidth.Start/Accept and Lanenum.Wait/Accept, collapsed (x1)
    CONFIG_COMPLETE = 5
    CONFIG_IDLE = 6
    L0 = 7
    RECOVERY_RCVRLOCK = 8
    RECOVERY_SPEED = 9
    RECOVERY_RCVRCFG = 10
    RECOVERY_IDLE = 11


LTSSM_STATE_BITS = 4


def pcie_tag(code: int) -> int:
    """The tag of contrast-link word ``code``: the code in bits [7:1], odd parity in bit 0."""
    return code << 1 | parity_bit(code)


def pcie_word(code: int, body: int) -> int:
    return pcie_tag(code) << SLICE_BITS | body


# The fill word the contrast link's channel inserts or drops on drift, and its ends drop on receipt.
SKP_WORD = pcie_word(PcieCode.SKP, 0)


def pcie_decode(word: int | None):
    """(code, slice) of a contrast-link word: code None for no signal, "MALFORMED" for a tag that
    fails parity or names no word of this link."""
    if word is None:
        return None, 0
    tag, body = word >> SLICE_BITS, word & ((1 << SLICE_BITS) - 1)
    code = tag >> 1
    if bin(tag).count("1") & 1 == 0 or code not in PCIE_CODES:
        return "MALFORMED", body
    return code, body
