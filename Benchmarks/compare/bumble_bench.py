#!/usr/bin/env python3
"""Bumble's half of scripts/bench-compare.sh: the operations of bluejay-compare, on the
same corpus files, with Bumble's own codecs and GATT client/server.

    bumble_bench.py CORPUS_DIR [--seconds S] [--only op,op]

Each operation runs one warm-up batch, then whole batches until at least S seconds have
passed (as bluejay-compare does), and prints items per second and a check string that must
equal Bluejay's. Needs the pinned Bumble of the interop tests (bumble==0.0.236).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import struct
import sys
import time
import zlib
from pathlib import Path

from bumble import att, gatt, gatt_client, gatt_server, hci
from bumble.core import AdvertisingData, PhysicalTransport
from bumble.host import Connection as HostConnection
from bumble.host import DataPacketQueue, Host
from bumble.transport.common import PacketParser

CONNECTION_HANDLE = 0x0040


# -----------------------------------------------------------------------------
# Corpus
# -----------------------------------------------------------------------------
def records(data: bytes) -> list[bytes]:
    items = []
    offset = 0
    while offset < len(data):
        (length,) = struct.unpack_from('<I', data, offset)
        items.append(data[offset + 4 : offset + 4 + length])
        offset += 4 + length
    return items


class Corpus:
    def __init__(self, directory: Path) -> None:
        def load(name: str) -> bytes:
            return (directory / name).read_bytes()

        self.manifest = json.loads(load('manifest.json'))
        # Bumble's packet decoders take the H4 indicator first: add it before any timing.
        self.adv_report_events = [b'\x04' + e for e in records(load('adv_reports.bin'))]
        stream = load('h4_stream.bin')
        chunk_bytes = load('h4_chunks.bin')
        sizes = struct.unpack(f'<{len(chunk_bytes) // 2}H', chunk_bytes)
        self.h4_chunks = []
        offset = 0
        for size in sizes:
            self.h4_chunks.append(stream[offset : offset + size])
            offset += size
        self.h4_packets = self.manifest['h4_packets']
        self.att_notifications = records(load('att_notifications.bin'))
        self.att_read_by_type = records(load('att_read_by_type.bin'))
        self.adv_data = records(load('adv_data.bin'))
        self.create_connections = []
        for record in records(load('create_connection.bin')):
            fields = struct.unpack('<HHBB6sBHHHHHH', record)
            (scan_interval, scan_window, filter_policy, peer_type, peer_be, own_type) = fields[:6]
            address = hci.Address(bytes(reversed(peer_be)), hci.AddressType(peer_type))
            self.create_connections.append(
                (scan_interval, scan_window, filter_policy, peer_type, address, own_type) + fields[6:]
            )
        self.l2cap_pdus = records(load('l2cap_pdus.bin'))
        self.acl_fragments_27 = [b'\x02' + f for f in records(load('acl_fragments_27.bin'))]


# -----------------------------------------------------------------------------
# Synchronous workloads
# -----------------------------------------------------------------------------
def adv_report_batch(corpus: Corpus) -> int:
    sink = 0
    from_bytes = hci.HCI_Packet.from_bytes
    for packet in corpus.adv_report_events:
        sink += len(from_bytes(packet).reports)
    return sink


def adv_report_check(corpus: Corpus) -> str:
    reports = data = rssi = fields = 0
    for packet in corpus.adv_report_events:
        event = hci.HCI_Packet.from_bytes(packet)
        assert isinstance(event, hci.HCI_LE_Advertising_Report_Event)
        for report in event.reports:
            reports += 1
            data += len(report.data)
            rssi += report.rssi
            fields += sum(bytes(report.address)) + int(report.address_type) + int(report.event_type)
    return (
        f'events={len(corpus.adv_report_events)} reports={reports} data={data} '
        f'rssi={rssi} fields={fields}'
    )


def h4_batch(corpus: Corpus) -> int:
    count = [0]

    class Sink:
        def on_packet(self, packet: bytes) -> None:
            count[0] += 1

    parser = PacketParser(Sink())
    for chunk in corpus.h4_chunks:
        parser.feed_data(chunk)
    return count[0]


def h4_check(corpus: Corpus) -> str:
    packets = []

    class Sink:
        def on_packet(self, packet: bytes) -> None:
            packets.append(packet)

    parser = PacketParser(Sink())
    for chunk in corpus.h4_chunks:
        parser.feed_data(chunk)
    size = sum(len(p) - 1 for p in packets)
    acl = sum(1 for p in packets if p[0] == hci.HCI_ACL_DATA_PACKET)
    return f'packets={len(packets)} bytes={size} acl={acl}'


def att_batch(pdus: list[bytes]) -> int:
    sink = 0
    from_bytes = att.ATT_PDU.from_bytes
    for pdu in pdus:
        sink += from_bytes(pdu).op_code
    return sink


def notification_check(corpus: Corpus) -> str:
    handles = values = 0
    for pdu in corpus.att_notifications:
        decoded = att.ATT_PDU.from_bytes(pdu)
        assert isinstance(decoded, att.ATT_Handle_Value_Notification)
        handles += decoded.attribute_handle
        values += len(decoded.attribute_value)
    return f'pdus={len(corpus.att_notifications)} handles={handles} values={values}'


def read_by_type_check(corpus: Corpus) -> str:
    entries = handles = values = 0
    for pdu in corpus.att_read_by_type:
        decoded = att.ATT_PDU.from_bytes(pdu)
        assert isinstance(decoded, att.ATT_Read_By_Type_Response)
        for handle, value in decoded.attributes:
            entries += 1
            handles += handle
            values += len(value)
    return (
        f'pdus={len(corpus.att_read_by_type)} entries={entries} handles={handles} values={values}'
    )


def adv_data_batch(corpus: Corpus) -> int:
    sink = 0
    from_bytes = AdvertisingData.from_bytes
    for data in corpus.adv_data:
        sink += len(from_bytes(data).ad_structures)
    return sink


def adv_data_typed_batch(corpus: Corpus) -> int:
    sink = 0
    from_bytes = AdvertisingData.from_bytes
    to_object = AdvertisingData.ad_data_to_object
    for data in corpus.adv_data:
        ad = from_bytes(data)
        sink += len([to_object(t, d) for t, d in ad.ad_structures])
    return sink


def adv_data_check(corpus: Corpus) -> str:
    structures = types = data = 0
    for payload in corpus.adv_data:
        for ad_type, ad_data in AdvertisingData.from_bytes(payload).ad_structures:
            structures += 1
            types += int(ad_type)
            data += len(ad_data)
    return f'payloads={len(corpus.adv_data)} structures={structures} types={types} data={data}'


def adv_data_typed_check(corpus: Corpus) -> str:
    flags = uuids = uuid_sum = name_chars = companies = mfr_bytes = 0
    T = AdvertisingData.Type
    for payload in corpus.adv_data:
        ad = AdvertisingData.from_bytes(payload)
        for ad_type, ad_data in ad.ad_structures:
            value = AdvertisingData.ad_data_to_object(ad_type, ad_data)
            if ad_type == T.FLAGS:
                flags += value
            elif ad_type == T.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS:
                uuids += len(value)
                uuid_sum += sum(struct.unpack('<H', u.to_bytes())[0] for u in value)
            elif ad_type == T.COMPLETE_LOCAL_NAME:
                name_chars += len(value)
            elif ad_type == T.MANUFACTURER_SPECIFIC_DATA:
                companies += value[0]
                mfr_bytes += len(value[1])
            else:
                return f'unexpected field {ad_type}'
    return (
        f'flags={flags} uuids={uuids} uuid_sum={uuid_sum} name_chars={name_chars} '
        f'companies={companies} mfr_bytes={mfr_bytes}'
    )


def encode_create_connection(fields) -> bytes:
    (si, sw, fp, pt, address, ot, imin, imax, lat, to, cemin, cemax) = fields
    return bytes(
        hci.HCI_LE_Create_Connection_Command(
            le_scan_interval=si,
            le_scan_window=sw,
            initiator_filter_policy=fp,
            peer_address_type=pt,
            peer_address=address,
            own_address_type=ot,
            connection_interval_min=imin,
            connection_interval_max=imax,
            max_latency=lat,
            supervision_timeout=to,
            min_ce_length=cemin,
            max_ce_length=cemax,
        )
    )


def create_connection_batch(corpus: Corpus) -> int:
    sink = 0
    for fields in corpus.create_connections:
        sink += len(encode_create_connection(fields))
    return sink


def create_connection_check(corpus: Corpus) -> str:
    crc = 0
    size = 0
    for fields in corpus.create_connections:
        packet = encode_create_connection(fields)[1:]  # without the H4 indicator
        crc = zlib.crc32(packet, crc)
        size += len(packet)
    return f'commands={len(corpus.create_connections)} bytes={size} crc={crc:08x}'


def fragment(pdu: bytes, size: int) -> list[bytes]:
    # As bumble.host.Host.send_acl_sdu cuts an SDU, then as it is written to the transport.
    return [
        bytes(
            hci.HCI_AclDataPacket(
                connection_handle=CONNECTION_HANDLE,
                pb_flag=1 if offset > 0 else 0,
                bc_flag=0,
                data_total_length=len(part),
                data=part,
            )
        )
        for offset in range(0, len(pdu), size)
        for part in (pdu[offset : offset + size],)
    ]


def fragment_batch(corpus: Corpus, size: int) -> int:
    sink = 0
    for pdu in corpus.l2cap_pdus:
        sink += len(fragment(pdu, size))
    return sink


def fragment_check(corpus: Corpus, size: int) -> str:
    crc = 0
    count = 0
    for pdu in corpus.l2cap_pdus:
        for packet in fragment(pdu, size):
            crc = zlib.crc32(packet[1:], crc)
            count += 1
    return f'pdus={len(corpus.l2cap_pdus)} fragments={count} crc={crc:08x}'


def reassembly_batch(corpus: Corpus, collect: list | None = None) -> int:
    count = [0]

    def on_pdu(pdu: bytes) -> None:
        count[0] += 1
        if collect is not None:
            collect.append(pdu)

    # bumble.host.Connection keeps one assembler per connection handle.
    assemblers: dict[int, hci.HCI_AclDataPacketAssembler] = {}
    from_bytes = hci.HCI_AclDataPacket.from_bytes
    for fragment_bytes in corpus.acl_fragments_27:
        packet = from_bytes(fragment_bytes)
        assembler = assemblers.get(packet.connection_handle)
        if assembler is None:
            assembler = assemblers[packet.connection_handle] = hci.HCI_AclDataPacketAssembler(on_pdu)
        assembler.feed_packet(packet)
    return count[0]


def reassembly_check(corpus: Corpus) -> str:
    pdus: list[bytes] = []
    reassembly_batch(corpus, pdus)
    crc = 0
    for pdu in pdus:
        crc = zlib.crc32(pdu, crc)
    return f'pdus={len(pdus)} crc={crc:08x}'


# -----------------------------------------------------------------------------
# The ACL path: Host.send_l2cap_pdu under flow control, a "controller" that completes
# every packet with Number Of Completed Packets on the next turn of the event loop.
# -----------------------------------------------------------------------------
class ACLPathBench:
    def __init__(self, buffer_size: int = 27, buffer_count: int = 8) -> None:
        self.loop = asyncio.get_running_loop()
        self.host = Host()
        self.host.ready = True
        self.host.le_acl_packet_queue = DataPacketQueue(
            max_packet_size=buffer_size,
            max_in_flight=buffer_count,
            send=self.host.send_hci_packet,
        )
        self.host.connections[CONNECTION_HANDLE] = HostConnection(
            self.host, CONNECTION_HANDLE, hci.Address('00:11:22:33:44:55'), PhysicalTransport.LE
        )
        self.completed = 0
        self.target = 0
        self.done: asyncio.Future | None = None
        bench = self

        class Sink:
            def on_packet(self, packet: bytes) -> None:
                if packet[0] != hci.HCI_ACL_DATA_PACKET:
                    return
                event = bytes([0x04, 0x13, 0x05, 0x01, packet[1], packet[2] & 0x0F, 0x01, 0x00])
                bench.loop.call_soon(bench.complete, event)

        self.host.set_packet_sink(Sink())
        self.buffer_size = buffer_size

    def complete(self, event: bytes) -> None:
        self.host.on_packet(event)
        self.completed += 1
        if self.done is not None and self.completed >= self.target and not self.done.done():
            self.done.set_result(None)

    async def send(self, payloads: list[bytes]) -> int:
        fragments = 0
        for payload in payloads:
            fragments += max(1, -(-(len(payload) + 4) // self.buffer_size))
        self.target = self.completed + fragments
        self.done = self.loop.create_future()
        for payload in payloads:
            self.host.send_l2cap_pdu(CONNECTION_HANDLE, att.ATT_CID, payload)
        await self.done
        return fragments


def acl_payloads(size: int, count: int) -> list[bytes]:
    # The same PDUs as ACLPathBench.pdus in Swift, without the basic header Bumble adds.
    return [bytes(i & 0xFF for i in range(size - 4))] * count


# -----------------------------------------------------------------------------
# GATT: Bumble's gatt_client.Client wired to Bumble's gatt_server.Server in memory. Each PDU
# crosses on the next turn of the event loop (as bytes from a transport would), and is
# decoded with ATT_PDU.from_bytes as bumble.device does. MTU stays 23.
# -----------------------------------------------------------------------------
READ_VALUE = bytes((i * 7) & 0xFF for i in range(20))
NOTIFY_VALUE = bytes((0xA0 + i) & 0xFF for i in range(20))
LONG_VALUE = bytes(i % 251 for i in range(512))


class FakeL2CAPManager:
    le_coc_channels: dict = {}


class FakeDevice:
    """What gatt_server.Server uses of bumble.device.Device."""

    def __init__(self) -> None:
        self.l2cap_channel_manager = FakeL2CAPManager()
        self.client: gatt_client.Client | None = None
        self.loop = asyncio.get_running_loop()

    def send_l2cap_pdu(self, connection_handle: int, cid: int, pdu: bytes) -> None:
        client = self.client
        self.loop.call_soon(lambda: client.on_gatt_pdu(att.ATT_PDU.from_bytes(pdu)))


class FakeConnection:
    """What gatt_client.Client and gatt_server.Server use of bumble.device.Connection."""

    EVENT_DISCONNECTION = 'disconnection'

    def __init__(self, server: gatt_server.Server) -> None:
        self.handle = CONNECTION_HANDLE
        self.att_mtu = att.ATT_DEFAULT_MTU
        self.server = server
        self.loop = asyncio.get_running_loop()

    def on(self, *args, **kwargs) -> None:
        pass

    def on_att_mtu_update(self, mtu: int) -> None:
        self.att_mtu = mtu

    def send_l2cap_pdu(self, cid: int, pdu: bytes) -> None:
        self.loop.call_soon(lambda: self.server.on_gatt_pdu(self, att.ATT_PDU.from_bytes(pdu)))


class GATTPair:
    @classmethod
    async def make(cls) -> GATTPair:
        self = cls()
        self.device = FakeDevice()
        self.server = gatt_server.Server(self.device)  # type: ignore[arg-type]
        self.read_characteristic = gatt.Characteristic(
            'FFF1', gatt.Characteristic.Properties.READ, gatt.Characteristic.READABLE, READ_VALUE
        )
        self.notify_characteristic = gatt.Characteristic(
            'FFF2',
            gatt.Characteristic.Properties.READ | gatt.Characteristic.Properties.NOTIFY,
            gatt.Characteristic.READABLE,
            bytes([0]),
        )
        self.write_characteristic = gatt.Characteristic(
            'FFF3',
            gatt.Characteristic.Properties.READ | gatt.Characteristic.Properties.WRITE,
            gatt.Characteristic.READABLE | gatt.Characteristic.WRITEABLE,
            b'',
        )
        self.server.add_service(
            gatt.Service(
                'FFF0',
                [self.read_characteristic, self.notify_characteristic, self.write_characteristic],
            )
        )
        self.connection = FakeConnection(self.server)
        self.client = gatt_client.Client(self.connection)  # type: ignore[arg-type]
        self.device.client = self.client
        # Discover as an application would (setup, not measured).
        services = await self.client.discover_service(gatt.UUID('FFF0'))
        characteristics = await self.client.discover_characteristics([], services[0])
        by_uuid = {c.uuid: c for c in characteristics}
        self.read_handle = by_uuid[gatt.UUID('FFF1')].handle
        self.write_handle = by_uuid[gatt.UUID('FFF3')].handle
        notify = by_uuid[gatt.UUID('FFF2')]
        await self.client.discover_descriptors(notify)
        self.received = 0
        self.target = 0
        self.done: asyncio.Future | None = None

        def on_value(value: bytes) -> None:
            self.received += 1
            if self.done is not None and self.received >= self.target and not self.done.done():
                self.done.set_result(None)

        await self.client.subscribe(notify, on_value)
        return self

    async def reads(self, count: int) -> int:
        total = 0
        for _ in range(count):
            total += len(await self.client.read_value(self.read_handle, no_long_read=True))
        return total

    async def notify(self, count: int) -> int:
        self.target = self.received + count
        self.done = asyncio.get_running_loop().create_future()
        for _ in range(count):
            await self.server.notify_subscriber(self.connection, self.notify_characteristic, NOTIFY_VALUE)  # type: ignore[arg-type]
        await self.done
        return count

    async def long_writes(self, count: int) -> int:
        for _ in range(count):
            await self.client.write_value(self.write_handle, LONG_VALUE, with_response=True)
        return count


# -----------------------------------------------------------------------------
# Measuring
# -----------------------------------------------------------------------------
async def measure(name, items, seconds, check, batch, is_async=False):
    async def once():
        return await batch() if is_async else batch()

    sink = await once()
    batches = 0
    start = time.perf_counter()
    while True:
        sink += await once()
        batches += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    check_value = check() if callable(check) else check
    return name, {
        'ops_per_sec': batches * items / elapsed,
        'ops': batches * items,
        'seconds': elapsed,
        'check': check_value,
    }


async def run(corpus: Corpus, seconds: float, only: set[str] | None) -> dict:
    results = {}

    def wanted(name: str) -> bool:
        return only is None or name in only

    async def add(*args, **kwargs):
        name, result = await measure(*args, **kwargs)
        results[name] = result

    if wanted('hci_adv_report_decode'):
        await add('hci_adv_report_decode', len(corpus.adv_report_events), seconds,
                  adv_report_check(corpus), lambda: adv_report_batch(corpus))
    if wanted('h4_deframe'):
        await add('h4_deframe', corpus.h4_packets, seconds, h4_check(corpus), lambda: h4_batch(corpus))
    if wanted('att_notification_decode'):
        await add('att_notification_decode', len(corpus.att_notifications), seconds,
                  notification_check(corpus), lambda: att_batch(corpus.att_notifications))
    if wanted('att_read_by_type_rsp_decode'):
        await add('att_read_by_type_rsp_decode', len(corpus.att_read_by_type), seconds,
                  read_by_type_check(corpus), lambda: att_batch(corpus.att_read_by_type))
    if wanted('adv_data_decode'):
        await add('adv_data_decode', len(corpus.adv_data), seconds, adv_data_check(corpus),
                  lambda: adv_data_batch(corpus))
    if wanted('adv_data_decode_typed'):
        await add('adv_data_decode_typed', len(corpus.adv_data), seconds, adv_data_typed_check(corpus),
                  lambda: adv_data_typed_batch(corpus))
    if wanted('hci_le_create_connection_encode'):
        await add('hci_le_create_connection_encode', len(corpus.create_connections), seconds,
                  create_connection_check(corpus), lambda: create_connection_batch(corpus))
    for size in (27, 251):
        if wanted(f'acl_fragment_512_to_{size}'):
            await add(f'acl_fragment_512_to_{size}', len(corpus.l2cap_pdus), seconds,
                      fragment_check(corpus, size), lambda size=size: fragment_batch(corpus, size))
    if wanted('acl_reassemble_27'):
        await add('acl_reassemble_27', len(corpus.l2cap_pdus), seconds, reassembly_check(corpus),
                  lambda: reassembly_batch(corpus))
    for size in (27, 512):
        if wanted(f'acl_send_path_{size}'):
            bench = ACLPathBench(27, 8)
            payloads = acl_payloads(size, 200)
            fragments = 200 * -(-size // 27)
            await add(f'acl_send_path_{size}', len(payloads), seconds,
                      f'pdus={len(payloads)} fragments={fragments}',
                      lambda bench=bench, payloads=payloads: bench.send(payloads), is_async=True)
    if wanted('gatt_read') or wanted('gatt_notify') or wanted('gatt_long_write_512'):
        pair = await GATTPair.make()
        if wanted('gatt_read'):
            value = await pair.client.read_value(pair.read_handle, no_long_read=True)
            await add('gatt_read', 200, seconds, f'value={len(value)} crc={zlib.crc32(value):08x}',
                      lambda: pair.reads(200), is_async=True)
        if wanted('gatt_notify'):
            await add('gatt_notify', 500, seconds, f'value={len(NOTIFY_VALUE)}',
                      lambda: pair.notify(500), is_async=True)
        if wanted('gatt_long_write_512'):
            def written() -> str:
                value = pair.write_characteristic.value
                return f'value={len(value)} crc={zlib.crc32(value):08x}'

            await add('gatt_long_write_512', 20, seconds, written, lambda: pair.long_writes(20), is_async=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('corpus', type=Path)
    parser.add_argument('--seconds', type=float, default=0.3)
    parser.add_argument('--only', type=str, default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    corpus = Corpus(args.corpus)
    only = set(args.only.split(',')) if args.only else None
    results = asyncio.run(run(corpus, args.seconds, only))
    import bumble

    version = getattr(bumble, '__version__', None)
    if version is None:
        from importlib.metadata import version as package_version

        version = package_version('bumble')
    json.dump({'implementation': 'bumble', 'version': version, 'results': results}, sys.stdout, indent=2)
    print()


if __name__ == '__main__':
    main()
