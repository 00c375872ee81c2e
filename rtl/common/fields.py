"""Control word bodies as Amaranth data layouts, from the field tables of ``golden.encoding``.

The golden model reads and builds a body with ``enc.TOKEN_BODY.get(body, "ait_seq")`` and
``enc.TOKEN_BODY.pack(...)``; the hardware reads it with ``view(enc.TOKEN_BODY, body).ait_seq``
and builds it with :func:`pack`. Both take the bit positions from the one table.
"""

from functools import cache

from amaranth.hdl import Cat, Const, Value, unsigned
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
    """A body of ``table.bits`` bits with the fields given and every other bit zero; a value
    wider than its field is an error, as in ``FieldTable.pack`` (ValueError naming the field)."""
    unknown = set(values) - {name for name, _, _ in table.fields}
    if unknown:
        raise KeyError(f"{table.name} has no field {sorted(unknown)[0]!r}")
    parts = []
    for name, _, width in table.fields:
        value = values.get(name, 0)
        if isinstance(value, int):
            if not 0 <= value < 1 << width:
                raise ValueError(f"{table.name}.{name} is {width} bits wide: {value!r} does not fit")
            value = Const(value, width)
        else:
            value = Value.cast(value)
            if value.shape().signed or len(value) > width:
                raise ValueError(f"{table.name}.{name} is {width} bits wide: {value!r} does not fit")
            value = value if len(value) == width else Cat(value, Const(0, width - len(value)))
        parts.append(value)
    parts.append(Const(0, table.bits - table.reserved_lsb))
    return Cat(*parts)
