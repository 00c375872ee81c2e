"""Control word bodies as Amaranth data layouts, from the field tables of ``golden.encoding``.

The golden model reads and builds a body with ``enc.TOKEN_BODY.get(body, "ait_seq")`` and
``enc.TOKEN_BODY.pack(...)``; the hardware reads it with ``view(enc.TOKEN_BODY, body).ait_seq``
and builds it with :func:`pack`. Both take the bit positions from the one table.
"""

from functools import cache

from amaranth.hdl import Const, Value, unsigned
from amaranth.lib import data

from golden import encoding as enc


@cache
def layout(table: enc.FieldTable) -> data.StructLayout:
    """The table's fields in order from bit 0, and ``reserved`` for the rest of the body's bits
    (zero wide when every bit is used), which MUST be zero on the wire."""
    fields = {name: unsigned(width) for name, _, width in table.fields}
    fields["reserved"] = unsigned(table.bits - table.reserved_lsb)
    return data.StructLayout(fields)


def view(table: enc.FieldTable, body) -> data.View:
    """``body`` (a value of the table's width) seen through the table's layout."""
    return data.View(layout(table), body)


def pack(table: enc.FieldTable, **values) -> Value:
    """A body with the fields given, in the order given, and every other bit zero: the OR of each
    field shifted to its place (an int is folded into a constant). A value wider than its field is
    an error, as in ``FieldTable.pack`` (ValueError naming the field).

    The result is at least as wide as the body, not exactly: assign it to a signal of the table's
    width, or take ``[: table.bits]`` before a :func:`view`. It is the expression a hand-written
    body would be, on purpose: yosys and abc map a ``Cat`` of the fields with zero padding, the
    same logic, to up to half again as many LUTs where a body feeds a multiplexer (the training
    block: 633 LUT4 against 435)."""
    parts = []
    for name, value in values.items():
        if isinstance(value, int):
            # The golden table checks it and shifts it into place.
            parts.append(Const(table.pack(**{name: value}), table.bits))
            continue
        width = table.width(name)  # KeyError for a field the table does not have
        value = Value.cast(value)
        if value.shape().signed or len(value) > width:
            raise ValueError(f"{table.name}.{name} is {width} bits wide: {value!r} does not fit")
        parts.append(value << table.lsb(name))
    if not parts:
        return Const(0, table.bits)
    body = parts[0]
    for part in parts[1:]:
        body = body | part
    return body
