"""wire/udp/codec.py: a registry compiled into a Protocol (the MORAI one behind the public API, and a registry
of one's own); the decode and encode of the MORAI messages through the API are in the other
test_udp_*.py files."""

import struct

import pytest

from morai_bridge.wire import udp


def test_public_api_is_the_compiled_morai_registry():
    from morai_bridge.wire.udp import lockstep, codec as udp_codec, schema as udp_schema
    assert isinstance(udp.PROTOCOL, udp_codec.Protocol)
    assert udp.decode == udp.PROTOCOL.decode and udp.encode == udp.PROTOCOL.encode
    assert udp.VARIANTS is udp.PROTOCOL.VARIANTS and udp.HEADERS is udp.PROTOCOL.HEADERS
    assert [s.cls for s in udp_schema.SPECS] == list(udp.MESSAGE_CLASSES[:-1])
    assert udp.DecodeError is udp_codec.DecodeError is lockstep.DecodeError
    assert udp.EncodeError is udp_codec.EncodeError is lockstep.EncodeError
    assert udp.DecodeError.__module__ == "morai_bridge.wire.udp"


def test_a_registry_of_its_own_compiles_with_defaults():
    from morai_bridge.wire.udp.codec import Protocol
    from morai_bridge.wire.udp.schema import PAD_NUL, Field, Registry, Variant, define_message
    reg = Registry("test_registry", data_length_field=False)
    fields = (Field("n", "H", "count", default=7), Field("on", "?", "bool"),
              Field("name", "8s", "ASCII", PAD_NUL), Field("x", "f", "m"))
    Demo = define_message("Demo", "demo", b"#Demo$", "user->sim", "A test message.",
                          [Variant(15, fields)], current=15, registry=reg)
    assert Demo._fields == ("n", "on", "name", "x") and Demo() == Demo(7, False, "", 0.0)
    assert Demo.__module__ == "test_registry" and "n (H): count (default 7)" in Demo.__doc__
    proto = Protocol("Demo", reg, strict=True)
    data = proto.encode(Demo(n=3, on=True, name="ab", x=1.5))
    assert data == b"#Demo$" + struct.pack("<I", 15) + bytes(12) + \
        struct.pack("<H?8sf", 3, True, b"ab", 1.5) + b"\r\n"
    assert proto.decode(data) == Demo(3, True, "ab", 1.5)
    assert proto.make(Demo) == Demo() and proto.classify(data) == "demo"
    assert proto.HEADERS[b"#Demo$"].lengths == {15: (len(data),)}
    for bad, field in ((Demo(on=2), "on"), (Demo(n=True), "n"), (Demo(x="1"), "x"),
                       (Demo(n=70000), "n"), (Demo(name="x" * 9), "name")):
        with pytest.raises(udp.EncodeError) as info:
            proto.encode(bad)
        assert info.value.field == field
    with pytest.raises(udp.DecodeError, match="not a Demo datagram"):
        proto.decode(b"$GPGGA,1*00\r\n")
    with pytest.raises(udp.DecodeError, match="unknown header"):
        proto.decode(udp.encode(udp.make(udp.LampControl)))
    with pytest.raises(udp.DecodeError, match="unknown header"):
        udp.decode(data)  # registries never accept each other's packets
    with pytest.raises(TypeError):
        proto.encode(udp.make(udp.LampControl))


def test_the_names_of_the_split_modules_stay_importable_from_udp_codec():
    """udp.py and lockstep.py import the errors, TAIL, HeaderInfo and TextMessage from here."""
    from morai_bridge.wire.udp import codec as udp_codec, errors as udp_errors, framing as udp_framing
    assert udp_codec.DataLengthMismatch is udp_errors.DataLengthMismatch is udp.DataLengthMismatch
    assert udp_codec.HeaderInfo is udp_framing.HeaderInfo is udp.HeaderInfo
    assert udp_codec.TextMessage is udp_framing.TextMessage and udp_codec.TAIL == udp.TAIL == b"\r\n"
    assert all(hasattr(udp_codec, name) for name in udp_codec.__all__)
    assert issubclass(udp_codec.Protocol, udp_framing.Framing)


def test_text_fields_decode_without_their_padding():
    from morai_bridge.wire.udp.codec import dollar_text_of, text_of
    assert text_of(b"A119BS010184\x00\x00") == "A119BS010184"
    assert text_of(b"C119  ") == "C119" and text_of(bytes(8)) == ""
    assert text_of(b"\xffx\x00") == "\ufffdx"                      # not ASCII: replaced, never raises
    assert dollar_text_of(b"ok$\x00\x00") == "ok" and dollar_text_of(b"no dollar\x00") == "no dollar"
