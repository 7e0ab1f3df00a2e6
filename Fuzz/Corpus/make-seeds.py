#!/usr/bin/env python3
"""Writes the committed seed corpus of each fuzz target: a handful of valid inputs, in the
input format each target's main.swift describes, so that fuzzing starts from inputs that
reach deep into the code rather than from nothing. Run from anywhere; rewrites Fuzz/Corpus/*/."""
import hashlib
import os
import struct

ROOT = os.path.dirname(os.path.abspath(__file__))


def u16(value):
    return struct.pack("<H", value)


def chunk(data):
    assert len(data) < 256
    return bytes([len(data)]) + bytes(data)


def write(target, *inputs):
    folder = os.path.join(ROOT, target)
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(folder):
        if name.startswith("seed-"):
            os.remove(os.path.join(folder, name))
    for data in inputs:
        data = bytes(data)
        with open(os.path.join(folder, "seed-" + hashlib.sha1(data).hexdigest()[:12]), "wb") as file:
            file.write(data)


# H4: a command, its Command Complete, an ACL packet longer than 255 bytes, SCO, ISO.
reset = b"\x01\x03\x0c\x00"
reset_complete = b"\x04\x0e\x04\x01\x03\x0c\x00"
acl = b"\x02\x40\x20\x05\x01" + bytes(range(256)) + bytes(5)
sco = b"\x03\x01\x00\x02\xaa\xbb"
iso = b"\x05\x01\x00\x03\x00\x01\x02\x03"
stream = reset + reset_complete + acl + sco + iso
write("FuzzH4Deframer",
      b"\x00" + stream,
      b"\x03" + u16(1) + u16(6) + u16(200) + stream,
      b"\x02" + u16(2) + u16(3) + reset_complete + acl[:100],
      b"\x01" + u16(5) + reset + b"\x07" + reset)

# HCI events (code, length, parameters).
def event(code, parameters):
    return bytes([code, len(parameters)]) + bytes(parameters)

le_connection_complete = bytes([0x01, 0x00]) + u16(0x0040) + bytes([0x00, 0x00]) + bytes.fromhex("221100eeffc0") + u16(24) + u16(0) + u16(72) + b"\x00"
advertising_report = bytes([0x02, 0x01, 0x00, 0x01]) + bytes.fromhex("221100eeffc0") + chunk(b"\x02\x01\x06\x05\x09Test\x03\x03\x0d\x18") + b"\xc8"
extended_report = (bytes([0x0d, 0x01]) + u16(0x0013) + b"\x00" + bytes.fromhex("221100eeffc0") + bytes([0x01, 0x00, 0xff, 0x7f, 0xc8])
                   + u16(0) + b"\x00" + bytes(6) + chunk(b"\x02\x01\x06\x05\x09Test"))
write("FuzzHCIEvent",
      event(0x0e, b"\x01\x03\x0c\x00"),
      event(0x0e, b"\x01\x02\x20\x00\xfb\x00\x08"),
      event(0x0e, b"\x01\x05\x14\x00\x40\x00\xc5"),
      event(0x0f, b"\x00\x01\x0d\x20"),
      event(0x05, b"\x00\x40\x00\x13"),
      event(0x13, b"\x01\x40\x00\x02\x00"),
      event(0x3e, le_connection_complete),
      event(0x3e, advertising_report),
      event(0x3e, extended_report))

# HCI commands: a selector byte (even: as is), then opcode, length, parameters.
def command(ocf, ogf, parameters):
    return u16(ogf << 10 | ocf) + bytes([len(parameters)]) + bytes(parameters)

write("FuzzHCICommand",
      b"\x00" + command(0x0003, 0x03, b""),
      b"\x00" + command(0x000b, 0x08, b"\x01\x60\x00\x30\x00\x00\x00"),
      b"\x00" + command(0x000d, 0x08, b"\x60\x00\x30\x00\x00\x00" + bytes.fromhex("221100eeffc0") + b"\x00\x18\x00\x28\x00\x00\x00\x48\x00\x00\x00\x00\x00"),
      b"\x00" + command(0x0006, 0x01, b"\x40\x00\x13"),
      b"\x00" + command(0x0008, 0x08, b"\x09\x02\x01\x06\x05\x09Test" + bytes(22)),
      b"\x00" + command(0x0041, 0x08, b"\x00\x00\x01\x01\x60\x00\x30\x00"))

# ACL: garbage fragments (control, chunk), then the final PDU (handle, fragment size, channel, payload).
def final(handle_index, fragment_size, channel, payload):
    return bytes([handle_index, fragment_size]) + u16(channel) + u16(len(payload)) + bytes(payload)

write("FuzzACLReassembly",
      b"\x00" + final(1, 27, 0x0004, b"\x0a\x03\x00"),
      b"\x02" + bytes([0x09]) + chunk(b"\x10\x00\x04\x00\x0b") + bytes([0x05]) + chunk(b"\x01\x02") + final(1, 5, 0x0004, bytes(40)),
      b"\x03" + bytes([0x08]) + chunk(b"\x05") + bytes([0x04]) + chunk(b"\x00\x05\x00\x01") + bytes([0x09]) + chunk(bytes(300 % 256))
      + final(0, 1, 0x0006, b"\x0b\x01"),
      b"\x01" + bytes([0x0d]) + chunk(b"\x03\x00\x05\x00") + final(3, 255, 0x0005, b"\x12\x01\x08\x00\x18\x00\x28\x00\x00\x00\x48\x00"))

# Capture redaction: PDUs (CID choice, payload chunk, cuts, the other link's packet).
write("FuzzCaptureRedactor",
      b"\x02" + b"\x00" + chunk(b"\x06" + bytes(range(16))) + b"\x02\x03\x0b" + b"\x01" + chunk(b"\x41\x10\x02\x00\xaa\xbb")
      + b"\x01" + chunk(b"\x0b\x01\x02") + b"\x00" + b"\x03" + chunk(b"\x0e\x04\x01\x17\x20\x00"),
      b"\x03" + b"\x00" + chunk(b"\x03" + bytes(16)) + b"\x03\x01\x04\x05" + b"\x00" + chunk(b"\x19\x20\x1c" + bytes(28))
      + b"\x00" + chunk(b"\x0d" + bytes(range(16))) + b"\x01\x14" + b"\x01" + chunk(b"\x41\x00")
      + b"\x00" + chunk(b"\x07\x34\x12" + bytes(8)) + b"\x00" + b"\x01" + chunk(b""))

# L2CAP PDUs: selector (0 frame, 1 signalling, 2 SMP, 3 ATT), then the PDU.
write("FuzzChannelPDUs",
      b"\x00" + u16(3) + u16(0x0004) + b"\x0a\x03\x00",
      b"\x01\x12\x01" + u16(8) + u16(0x18) + u16(0x28) + u16(0) + u16(0x48),
      b"\x01\x01\x07" + u16(2) + u16(0),
      b"\x01\x14\x02" + u16(10) + u16(0x0080) + u16(0x0040) + u16(100) + u16(100) + u16(5),
      b"\x01\x17\x03" + u16(12) + u16(0x0080) + u16(100) + u16(100) + u16(5) + u16(0x0040) + u16(0x0041),
      b"\x02\x01\x03\x00\x01\x10\x07\x07",
      b"\x02\x0b\x01",
      b"\x02\x09\x00" + bytes.fromhex("221100eeffc0"),
      b"\x03\x11\x06" + u16(1) + u16(5) + u16(0x1800) + u16(6) + u16(9) + u16(0x1801),
      b"\x03\x04" + u16(1) + u16(0xffff),
      b"\x03\x05\x01" + u16(0x0004) + u16(0x2902),
      b"\x03\x20" + u16(3) + u16(5),
      b"\x03\x23" + u16(3) + u16(2) + b"\x01\x02")

# A credit-based channel: our MTU - 23 (two bytes), MPS byte, credits byte, then steps (0 a
# K-frame chunk, 1 a well-formed SDU: length and cut, 2 read, 3 give credits, 4 a signalling
# chunk, 5 credits, 6 a write: length and seed, 7 send, 8 drain).
def sig(code, data):
    return chunk(bytes([code, 1]) + u16(len(data)) + data)

le_response = sig(0x15, u16(0x0040) + u16(100) + u16(50) + u16(3) + u16(0))
enhanced_request = sig(0x17, u16(0x0080) + u16(128) + u16(64) + u16(2) + u16(0x0040) + u16(0x0041))
enhanced_response = sig(0x18, u16(256) + u16(100) + u16(1) + u16(0) + u16(0x0040))
reconfigure = sig(0x19, u16(300) + u16(64) + u16(0x0040))
credits = sig(0x16, u16(0x0040) + u16(4))
write("FuzzCreditChannel",
      u16(77) + b"\x1b\x03" + b"\x01" + u16(60) + b"\x2f" + b"\x02\x03" + b"\x01" + u16(100) + b"\x00\x02\x02\x03\x08",
      u16(77) + b"\x1b\x01" + b"\x01" + u16(100) + b"\x05" + b"\x03\x01" + u16(10) + b"\x09\x08",
      u16(200) + b"\x40\x04" + b"\x04" + le_response + b"\x06" + u16(150) + b"\x07\x07" + b"\x04" + credits + b"\x07\x05" + u16(20) + b"\x07",
      u16(200) + b"\x40\x04" + b"\x04" + enhanced_request + b"\x04" + reconfigure + b"\x06" + u16(299) + b"\x01\x07",
      u16(200) + b"\x40\x04" + b"\x04" + enhanced_response + b"\x06" + u16(300) + b"\x01\x05" + u16(0xffff) + b"\x07",
      u16(77) + b"\x1b\x02" + b"\x00" + chunk(b"\xc8\x00\x01"),
      u16(77) + b"\x1b\x02" + b"\x00" + chunk(b"\x05\x00\x01") + b"\x00" + chunk(b"\x02\x03\x04\x05\x06"))

# The host: role byte, then frames (control: channel in bits 0-1, a cut in bit 7; chunk).
def frame(channel, payload, cut=None):
    control = channel | (0x80 | cut if cut is not None else 0)
    return bytes([control]) + chunk(payload)

signaling_update = b"\x12\x01" + u16(8) + u16(0x18) + u16(0x28) + u16(0) + u16(0x48)
write("FuzzHostChannels",
      b"\x00" + frame(0, signaling_update) + frame(1, b"\x01\x03\x00\x01\x10\x07\x07") + frame(2, b"\x02\x05\x02"),
      b"\x01" + frame(0, signaling_update, cut=3) + frame(0, b"\x14\x02" + u16(10) + u16(0x0080) + u16(0x0040) + u16(100) + u16(100) + u16(5)),
      b"\x00" + frame(0, b"\x06\x04" + u16(4) + u16(0x0040) + u16(0x0041)) + frame(0, b"\x13\x05" + u16(2) + u16(0)) + frame(1, b"\x0b"),
      b"\x00" + frame(0, b"\x02\x06\x00\x00") + frame(3, b"\x01\x02\x03") + frame(1, b"\x0b\x01", cut=2))

# The GATT client: the proposed MTU (2 bytes, big-endian), then answers in the order the
# target's procedures ask (control 2: the expected response opcode, then the chunk; control 1:
# an Error Response with handle and code; the input's end answers Attribute Not Found).
def answer(parameters):
    return b"\x02" + chunk(parameters)

def not_found(handle=0):
    return b"\x01" + u16(handle) + b"\x0a"

gatt_client = (b"\x02\x05"
               + answer(u16(23))
               + answer(b"\x06" + u16(1) + u16(5) + u16(0x1800) + u16(6) + u16(9) + u16(0x1801)) + not_found()
               # Service 0x1800: includes, characteristics, descriptors, long read.
               + not_found() + answer(b"\x07" + u16(2) + b"\x02" + u16(3) + u16(0x2a00)) + not_found()
               + answer(b"\x01" + u16(4) + u16(0x2902)) + not_found() + answer(b"Bluejay")
               # Service 0x1801: Service Changed.
               + not_found() + answer(b"\x07" + u16(7) + b"\x20" + u16(8) + u16(0x2a05)) + not_found()
               + answer(b"\x01" + u16(9) + u16(0x2902)) + answer(b"\x01\x00\xff\xff")
               # Discover by UUID, Read Multiple Variable, an empty long write.
               + answer(u16(6) + u16(9)) + not_found() + answer(u16(2) + b"ab" + u16(1) + b"c") + u16(0) + answer(b"")
               # Service Changed: discovery, the descriptor write, then indications.
               + answer(u16(6) + u16(9)) + not_found() + answer(b"\x07" + u16(7) + b"\x20" + u16(8) + u16(0x2a05)) + not_found()
               + answer(b"\x01" + u16(9) + u16(0x2902)) + answer(b""))
write("FuzzGATTClient",
      gatt_client,
      gatt_client + chunk(u16(1) + u16(5)) + chunk(u16(6) + u16(0xffff)),
      b"\x02\x05" + answer(u16(517)) + answer(b"\x14" + u16(1) + u16(0xffff) + bytes.fromhex("9ecadc240ee5a9e093f3a3b50100406e")),
      b"\x00\x17" + b"\x00" + chunk(b"\x03\x17\x00") + b"\x82" + chunk(b"\x10\x00\x01") + answer(b"\x06" + u16(1) + u16(0xffff) + u16(0x180d)))

# The GATT server: operations (control: bits 0-2 the operation, 0-4 a client PDU, bit 7 the
# client; selector < 0x40: the chunk is the whole PDU).
def pdu(data, client=0):
    return bytes([client << 7, 0x00]) + chunk(data)

discovery = (pdu(b"\x02" + u16(185)) + pdu(b"\x10" + u16(1) + u16(0xffff) + u16(0x2800)) + pdu(b"\x10" + u16(0x0010) + u16(0xffff) + u16(0x2800))
             + pdu(b"\x08" + u16(1) + u16(0xffff) + u16(0x2803)) + pdu(b"\x04" + u16(1) + u16(0xffff)) + pdu(b"\x0a" + u16(3)))
write("FuzzGATTServer",
      discovery,
      discovery + pdu(b"\x08" + u16(1) + u16(0xffff) + u16(0x2902)) + pdu(b"\x12" + u16(0x0017) + b"\x03\x00") + b"\x05" + chunk(b"\x01\x02\x03") + b"\x00",
      pdu(b"\x16" + u16(0x0016) + u16(0) + b"abc") + pdu(b"\x16" + u16(0x0016) + u16(3) + b"def") + pdu(b"\x18\x01") + pdu(b"\x0c" + u16(0x0016) + u16(2)),
      pdu(b"\x0e" + u16(3) + u16(5) + u16(7)) + pdu(b"\x20" + u16(3) + u16(0x0016), client=1) + b"\x06" + b"\x87" + pdu(b"\x52" + u16(0x0016) + b"x"),
      pdu(b"\x06" + u16(1) + u16(0xffff) + u16(0x2800) + u16(0x180d)) + pdu(b"\x3f") + pdu(b"\x1e") + pdu(b"\xd2" + u16(3) + bytes(12)))

# Advertising: options, then reports (control: bit 0 extended, event type; peer; repeats; data).
flags_name_uuids = b"\x02\x01\x06\x05\x09Test\x03\x03\x0d\x18"
write("FuzzAdvertising",
      b"\x00" + b"\x00\x01\x00" + chunk(flags_name_uuids) + b"\x08\x01\x00" + chunk(b"\x05\x08Tes\x00"),
      b"\x03" + b"\x00\x81\x02" + chunk(flags_name_uuids) + b"\x00\x82\x00" + chunk(b"\x02\x01\x06"),
      b"\x01" + b"\x43\x05\x00" + chunk(b"\x02\x01\x06\x0b\xff\x4c\x00\x02\x15") + b"\x03\x05\x00" + chunk(bytes(16) + b"\x00\x01\x00\x02\xc5"),
      b"\x00" + b"\x27\x07\x00" + chunk(b"\x11\x07" + bytes.fromhex("9ecadc240ee5a9e093f3a3b50100406e") + b"\x0a\x24\x17example.com"))

write("FuzzStrings",
      b"180D", b"0x2A37", b"0000FEED", b"6E400001-B5A3-F393-E0A9-E50E24DCCA9E", b"6e400001b5a3f393e0a9e50e24dcca9e",
      b"C0:FF:EE:00:11:22/random", b"c0-ff-ee-00-11-22", b"C0FFEE001122",
      b"tcp:127.0.0.1:9000", b"tcp:[::1]:9000", b"serial:/dev/ttyACM0@115200", b"unix:/tmp/bluejay.sock", b"hci0", b"virtual:radio",
      b"0x01ab:ff")

write("FuzzRestoration",
      b'{"version":1,"peripheral":"C0:FF:EE:00:11:22/random","listens":[{"uuid":"2A37","service":"180D"}]}',
      b'{\n  "listens" : [\n    {\n      "service" : "6E400001-B5A3-F393-E0A9-E50E24DCCA9E",\n'
      b'      "uuid" : "6E400003-B5A3-F393-E0A9-E50E24DCCA9E"\n    }\n  ],\n  "peripheral" : "C0:FF:EE:00:11:22",\n  "version" : 1\n}\n',
      b'{"version":1,"listens":[]}',
      b'{"version":1,"peripheral":"not an address","listens":[{"uuid":"nope","service":"180D"},{"uuid":"2A38","service":"180D"}]}')

# Each side's settings (IO capability, flags, minimum and maximum key size - 7), the nonce
# seed, then steps; with no steps the pairing runs honestly to its end.
def pairing(initiator, responder, seed=7, steps=b""):
    return bytes(initiator) + bytes(responder) + bytes([seed]) + steps


write("FuzzPairing",
      pairing([3, 1, 9, 9], [3, 1, 9, 9]),                       # LE Secure Connections, Just Works, bonding
      pairing([1, 1, 9, 9], [1, 1, 9, 9]),                       # Numeric Comparison
      pairing([2, 1, 9, 9], [0, 1, 9, 9]),                       # Passkey Entry, the responder displays
      pairing([4, 3, 9, 9], [2, 3, 9, 9]),                       # Passkey Entry with MITM, the initiator displays
      pairing([3, 9, 0, 9], [3, 9, 0, 0]),                       # legacy Just Works, 7-octet key
      pairing([2, 9, 9, 9], [0, 9, 9, 9]),                       # legacy Passkey Entry
      pairing([1, 1, 9, 9], [1, 1, 9, 9], steps=b"\x00\x80\x00\x03\x05\x01\x80\x08\x00"),  # a corrupted PDU, a refused comparison
      pairing([3, 1, 9, 9], [3, 5, 9, 9], steps=b"\x00\x04\x03\x0c\x01\x02\x0b"),           # SC only; a forged PDU; a timeout
      # The attacker role: bonds with the peer's address (weaker pairing: asked, refused or
      # allowed) and with a third identity the peer claims in Identity Address Information.
      pairing([3, 1, 9, 9], [3, 0x41, 9, 9]),                    # the responder's bond with the initiator: Just Works refused
      pairing([3, 0x41, 9, 9], [3, 1, 9, 9], steps=b"\x00\x08\x01"),  # the initiator's bond: a user who allows it
      pairing([3, 1, 9, 9], [3, 0xC1, 9, 9], steps=b"\x00\x80\x09\x0d" * 16),  # the initiator claims the responder's third identity
      pairing([3, 0xC1, 9, 9], [3, 1, 9, 9], steps=b"\x80\x00\x09\x8d" * 16))  # the responder claims the initiator's third identity

# D-Bus messages (the settings byte: bits 0-1 descriptors sent, bits 2-7 the read size less
# one), as dbus-daemon 1.14 and libdbus wrote them (captured with dbus-monitor --binary): Hello,
# its return, NameOwnerChanged, a GetStats return (a{sv}), a ServiceUnknown error; a call with
# 14 argument types (dbus-send); a big-endian return; a return carrying a descriptor.
hello = bytes.fromhex(
    "6c01000100000000010000007d00000001016f00150000002f6f72672f667265656465736b746f702f4442757300000006017300140000006f72672e"
    "667265656465736b746f702e444275730000000002017300140000006f72672e667265656465736b746f702e4442757300000000030173000500000048"
    "656c6c6f00000007017300040000003a312e3100000000")
hello_return = bytes.fromhex(
    "6c02010109000000010000003d00000006017300040000003a312e31000000000501750001000000080167000173000007017300140000006f72672e66"
    "7265656465736b746f702e4442757300000000040000003a312e3100")
name_owner_changed = bytes.fromhex(
    "6c0401011d000000050000008900000001016f00150000002f6f72672f667265656465736b746f702f4442757300000002017300140000006f72672e66"
    "7265656465736b746f702e444275730000000003017300100000004e616d654f776e65724368616e676564000000000000000007017300140000006f72"
    "672e667265656465736b746f702e444275730000000008016700037373730000000000000000040000003a312e310000000000000000000000000400"
    "00003a312e3100")
get_stats_return = bytes.fromhex(
    "6c02010190010000030000004500000006017300040000003a312e320000000005017500020000000801670005617b73767d0000000000000701730014"
    "0000006f72672e667265656465736b746f702e444275730000000088010000000000000600000053657269616c0001750000000000000000000000140000"
    "004c6973744d656d506f6f6c5573656442797465730001750010050000160000004c6973744d656d506f6f6c43616368656442797465730001750000009801"
    "000000000000190000004c6973744d656d506f6f6c416c6c6f6361746564427974657300017500000000800a000011000000416374697665436f6e6e6563"
    "74696f6e73000175000000000200000015000000496e636f6d706c657465436f6e6e656374696f6e730001750000000000000000000000000a0000004d61"
    "74636852756c6573000175000000010000000e0000005065616b4d6174636852756c657300017500000001000000000000001b0000005065616b4d617463"
    "6852756c6573506572436f6e6e656374696f6e000175000001000000080000004275734e616d65730001750001000000000000000c0000005065616b4275"
    "734e616d65730001750001000000190000005065616b4275734e616d6573506572436f6e6e656374696f6e0001750000000001000000")
service_unknown = bytes.fromhex(
    "6c03010147000000030000007500000006017300040000003a312e340000000004017300290000006f72672e667265656465736b746f702e444275732e"
    "4572726f722e53657276696365556e6b6e6f776e000000000000000501750002000000080167000173000007017300140000006f72672e667265656465"
    "736b746f702e444275730000000042000000546865206e616d65206f72672e6578616d706c652e4e6f626f647920776173206e6f742070726f76696465"
    "6420627920616e79202e736572766963652066696c657300")
libdbus_call = bytes.fromhex(
    "6c010001740000000100000069000000" "01016f00100000002f6f72672f6578616d706c652f4f626a0000000000000000"
    "02017300110000006f72672e6578616d706c652e49666163650000000000000003017300060000004d6574686f640000"
    "08016700137369746462796e7178756f6173617b73697d76000000000000000006000000" "68c3a96c6c6f0000feffffff"
    "0700000000000000000000000000f83f010000000900fdff0400000000000000fbffffffffffffff0600000004000000"
    "2f612f62000000000e000000010000007800000001000000790000000c000000010000006b00000001000000016900002a000000")
big_endian_return = bytes.fromhex("42020001" "00000004" "00000002" "0000000f" "05017500" "00000001" "08016700" "01750000" "00000007")
fd_return = bytes.fromhex("6c02000104000000020000001800000005017500010000000801670001680000090175000100000000000000")
write("FuzzDBusMessage",
      b"\x00" + hello, b"\x00" + hello_return, b"\x0c" + name_owner_changed, b"\xfc" + get_stats_return, b"\x04" + service_unknown,
      b"\x1c" + libdbus_call, b"\x00" + big_endian_return, b"\x01" + fd_return, b"\x00" + hello + hello_return)
