#!/usr/bin/env python3
'''Bumble's virtual radio for the end-to-end benchmark (scripts/bench-rig.sh).

One process, one Bumble LocalLink:

    central host ──H4/TCP──▶ slot controller ══ LocalLink ══ peer controller ◀── Bumble Device "Bench Peer"
                                                  ╚══════ K link-level advertisers (scan workload)

Each slot is a fresh controller served once on 127.0.0.1 (port chosen by the OS): it takes
the first TCP connection, stops listening, and leaves the link when that connection closes
(its links end with reason 0x08, so the peer advertises again).

stdout carries one JSON object per line: `ready` first, then exactly one reply per command
read from stdin (also one JSON object per line). Logs go to stderr.

    {"cmd":"new_slot"}                              -> {"event":"slot","port":P}
    {"cmd":"stream","count":N,"size":S[,"interval_ms":I]}
                                                    -> {"event":"streamed","requested":N,"notified":K,"delivered":D,...}
                                                       once every notification is out (see BenchPeer.stream): K the
                                                       notifications the peer's GATT server was asked to send, D the
                                                       ATT notifications of that value the central's controller
                                                       then wrote to its host (counted on the wire, not echoed)
    {"cmd":"advertisers","count":K,"interval_ms":I} -> {"event":"advertising","count":K}
    {"cmd":"stop_advertisers"}                      -> {"event":"advertisers_stopped"}
    {"cmd":"l2cap_received","bytes":N}              -> {"event":"l2cap_received","bytes":B,"sdus":S} once the
                                                       peer's newest L2CAP channel has received B >= N bytes
                                                       (counted from its opening, so the command may arrive
                                                       after the data)
    {"cmd":"stats"}                                 -> {"event":"stats","cpu_s":...,"acl_to_host":...,"events_to_host":...}
                                                       (this process's user+sys CPU; packets sent to all hosts so far)
    {"cmd":"quit"}                                  -> {"event":"bye"}, then exit (also on end of stdin)
'''

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import logging
import resource
import struct
import sys
import time
from typing import Any

from bumble import gatt, hci, l2cap, ll
from bumble.controller import Controller
from bumble.device import Device
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport.common import AsyncPipeSink, PacketParser

logger = logging.getLogger('radio')

# The peer's database: read these from here (the Swift client has the same constants).
SERVICE_UUID = '5B1E0001-6A79-4B2C-9D3E-0F1A2B3C4D5E'
NOTIFY_UUID = '5B1E0002-6A79-4B2C-9D3E-0F1A2B3C4D5E'  # notify
READ_UUID = '5B1E0003-6A79-4B2C-9D3E-0F1A2B3C4D5E'  # read, 20 bytes
READ_VALUE = bytes(range(20))
# The peer's LE credit-based channel servers (the Swift client has the same constants): one
# counts what arrives, one also sends each SDU back. Both clients open channels with these values.
L2CAP_SINK_PSM = 0x0081
L2CAP_ECHO_PSM = 0x0083
L2CAP_MTU = 2048
L2CAP_MPS = 2048
L2CAP_CREDITS = 256
PEER_ADDRESS = 'F0:00:00:00:00:01'  # random static
SLOT_ADDRESS_FORMAT = 'F0:F1:F2:F3:{:02X}:{:02X}'  # public, one per slot
ADVERTISER_ADDRESS_FORMAT = 'F1:AD:00:00:{:02X}:{:02X}'  # random static
CONNECTION_TIMEOUT = 0x08
# How many ACL packets the peer may have queued in its host before the stream waits for
# them to complete. Bumble's host queues without limit; this keeps the backlog bounded.
STREAM_BACKLOG_PACKETS = 128
# Each streamed notification starts with its sequence number (0, 1, 2, ... per stream) and the
# time it was handed to the peer's GATT server (CLOCK_MONOTONIC, ns): the centrals, processes on
# this machine, check the numbers and take the latency from the same clock. Padding follows.
STREAM_HEADER = struct.Struct('<IQ')
# How long the stream waits for the central's controller to write the last notification to its
# host after the peer's host has them all out, before it answers with what it counted.
STREAM_DELIVERY_WAIT_S = 5.0
ATT_HANDLE_VALUE_NOTIFICATION = 0x1B
H4_TYPES = {2: 'acl_to_host', 4: 'events_to_host'}
packets_to_hosts: collections.Counter[str] = collections.Counter()


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def emit(event: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({'event': event, **fields}) + '\n')
    sys.stdout.flush()


class BenchController(Controller):
    '''A stock controller with three adjustments (see the comments) and a way off the link.'''

    # Legacy only: stock Bumble claims extended advertising and then answers even the legacy
    # LE Set Scan Enable with Extended Advertising Reports. Both hosts then use the legacy
    # scanning, advertising and connection commands.
    le_features = Controller.le_features & ~(
        hci.LeFeatureMask.LE_EXTENDED_ADVERTISING | hci.LeFeatureMask.LE_PERIODIC_ADVERTISING
    )

    def __init__(self, name: str, link: LocalLink, public_address: str | None = None):
        super().__init__(name, link=link, public_address=public_address)
        # LocalLink sends a link's data from the sender's *random* address, whatever address
        # the link was made with. A host that connects with its public address (ours does)
        # would have every packet dropped by the peer; with random = public it arrives.
        # A host that sets a random address (Bumble's does) overrides this and uses it.
        if public_address is not None:
            self.random_address = self.public_address

    def on_ll_advertising_pdu(self, packet: ll.AdvertisingPdu) -> None:
        # The stock controller ignores ADV_NONCONN_IND and reports every ADV_IND twice (as
        # ADV_IND and as a SCAN_RSP echoing the data). The scan workload's advertisers are
        # non-connectable: one report per advertising PDU, the same for both hosts.
        if isinstance(packet, ll.AdvNonConnInd):
            if self.le_scan_enable:
                report = hci.HCI_LE_Advertising_Report_Event.Report(
                    event_type=hci.HCI_LE_Advertising_Report_Event.EventType.ADV_NONCONN_IND,
                    address_type=packet.advertiser_address.address_type,
                    address=packet.advertiser_address,
                    data=packet.data,
                    rssi=-50,
                )
                self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([report]))
            return
        super().on_ll_advertising_pdu(packet)

    def retire(self) -> None:
        '''Leaves the link as if switched off: its links end, the peers see reason 0x08.'''
        self.host = None
        for connection in list(self.le_connections.values()):
            connection.send_ll_control_pdu(ll.TerminateInd(CONNECTION_TIMEOUT))
        self.le_connections.clear()
        self.le_scan_enable = False
        self.pending_le_connection = None
        if self in self.link.controllers:
            self.link.remove_controller(self)


class Slot(asyncio.Protocol):
    '''A fresh controller for one central host: one TCP connection, then it is gone.'''

    def __init__(self, link: LocalLink, index: int):
        self.controller = BenchController(
            f'slot{index}', link, SLOT_ADDRESS_FORMAT.format(index >> 8, index & 0xFF)
        )
        self.parser = PacketParser(self.controller)
        self.server: asyncio.AbstractServer | None = None
        self.transport: asyncio.Transport | None = None
        # ATT notifications of `watched_handle` written to the host so far (see `on_packet`),
        # and a waiter (count, future) for the stream.
        self.watched_handle: int | None = None
        self.notifications_delivered = 0
        self.delivery_waiter: tuple[int, asyncio.Future] | None = None

    async def listen(self) -> int:
        self.server = await asyncio.get_running_loop().create_server(lambda: self, '127.0.0.1', 0)
        return self.server.sockets[0].getsockname()[1]

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.server.close()  # one host per controller: nobody else gets in
        self.controller.host = self

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_packet(self, packet: bytes) -> None:  # from the controller, to the host
        packets_to_hosts[H4_TYPES.get(packet[0], 'other_to_host')] += 1
        if not self.transport.is_closing():
            self.transport.write(packet)
            if self.watched_handle is not None and self.is_watched_notification(packet):
                self.notifications_delivered += 1
                if self.delivery_waiter is not None and self.notifications_delivered >= self.delivery_waiter[0]:
                    if not self.delivery_waiter[1].done():
                        self.delivery_waiter[1].set_result(None)

    def is_watched_notification(self, packet: bytes) -> bool:
        '''Whether `packet` (H4) is an ACL packet starting an L2CAP PDU on the ATT channel that
        holds a Handle Value Notification of the watched handle. The controller hands each PDU
        from the link over whole (Controller.on_link_acl_data), so each is counted once.'''
        return (
            len(packet) >= 12
            and packet[0] == 0x02  # H4 ACL data
            and (packet[2] >> 4) & 0x3 in (0b00, 0b10)  # a first fragment
            and packet[7] == 0x04 and packet[8] == 0x00  # CID 0x0004: ATT
            and packet[9] == ATT_HANDLE_VALUE_NOTIFICATION
            and packet[10] | packet[11] << 8 == self.watched_handle
        )

    def watch_notifications(self, handle: int) -> None:
        '''Counts the notifications of `handle` written to the host from now on.'''
        self.watched_handle = handle
        self.notifications_delivered = 0

    async def delivered(self, count: int, timeout: float) -> int:
        '''The notifications counted, once there are `count` of them or `timeout` has passed.'''
        if self.notifications_delivered < count:
            reached = asyncio.get_running_loop().create_future()
            self.delivery_waiter = (count, reached)
            try:
                await asyncio.wait_for(reached, timeout)
            except asyncio.TimeoutError:
                logger.warning('%s: %d of %d notifications delivered after %.1f s', self.controller.name,
                               self.notifications_delivered, count, timeout)
            finally:
                self.delivery_waiter = None
        return self.notifications_delivered

    def connection_lost(self, error) -> None:
        logger.info('%s: host gone', self.controller.name)
        self.controller.retire()


class Advertisers:
    '''K non-connectable advertisers that exist only on the link: every interval each sends
    an ADV_NONCONN_IND PDU, with a random phase so they do not all fire at once.

    Not K Bumble Devices: the stock LegacyAdvertiser only sends ADV_IND, and every controller
    on the link receives every other's PDUs, so K controllers cost K² callbacks per interval
    in this process and would make the radio the bottleneck.'''

    def __init__(self, link: LocalLink):
        self.link = link
        self.timers: list[asyncio.Handle] = []

    def start(self, count: int, interval_ms: float) -> None:
        self.stop()
        loop = asyncio.get_running_loop()
        interval = interval_ms / 1000.0
        for index in range(count):
            address = hci.Address(
                ADVERTISER_ADDRESS_FORMAT.format(index >> 8, index & 0xFF), hci.Address.RANDOM_DEVICE_ADDRESS
            )
            name = f'Bench Adv {index:02d}'.encode()
            data = (
                bytes([2, 0x01, 0x04])  # flags: BR/EDR not supported
                + bytes([len(name) + 1, 0x09]) + name  # complete local name
                + bytes([9, 0xFF]) + struct.pack('<HI', 0xFFFF, index) + bytes([0, 0])  # manufacturer data
            )
            pdu = ll.AdvNonConnInd(advertiser_address=address, data=data)
            slot = len(self.timers)
            self.timers.append(loop.call_later(interval * index / count, self.fire, slot, pdu, interval))

    def fire(self, slot: int, pdu: ll.AdvNonConnInd, interval: float) -> None:
        self.link.send_advertising_pdu(None, pdu)  # the sender is only used to skip itself
        self.timers[slot] = asyncio.get_running_loop().call_later(interval, self.fire, slot, pdu, interval)

    def stop(self) -> None:
        for timer in self.timers:
            timer.cancel()
        self.timers = []


class BenchPeer:
    '''Bumble's Device "Bench Peer" on its own controller, in this process.'''

    def __init__(self, link: LocalLink, interval_ms: float):
        self.interval_ms = interval_ms
        self.controller = BenchController('peer', link)
        self.device = Device(
            name='Bench Peer',
            address=hci.Address(PEER_ADDRESS, hci.Address.RANDOM_DEVICE_ADDRESS),
            host=Host(self.controller, AsyncPipeSink(self.controller)),
        )
        Props, Perms = gatt.Characteristic.Properties, gatt.Characteristic.Permissions
        self.notifying = gatt.Characteristic(NOTIFY_UUID, Props.NOTIFY, Perms.READABLE, b'')
        readable = gatt.Characteristic(READ_UUID, Props.READ, Perms.READABLE, READ_VALUE)
        self.device.add_service(gatt.Service(SERVICE_UUID, [self.notifying, readable]))
        # What the newest channel received; a waiter (bytes, future) for `l2cap_received`.
        self.channel_bytes = 0
        self.channel_sdus = 0
        self.channel_waiter: tuple[int, asyncio.Future] | None = None

    async def start(self) -> None:
        await self.device.power_on()
        for psm, echo in ((L2CAP_SINK_PSM, False), (L2CAP_ECHO_PSM, True)):
            spec = l2cap.LeCreditBasedChannelSpec(psm=psm, mtu=L2CAP_MTU, mps=L2CAP_MPS, max_credits=L2CAP_CREDITS)
            self.device.create_l2cap_server(spec=spec, handler=lambda channel, echo=echo: self.accept_channel(channel, echo))
        # The stock controller reads the interval's 0.625 ms units as milliseconds: 20 ms
        # becomes 32 ms. Connecting waits for the peer's next advertising PDU.
        await self.device.start_advertising(
            auto_restart=True,  # again after each central leaves
            advertising_interval_min=self.interval_ms,
            advertising_interval_max=self.interval_ms,
        )

    def accept_channel(self, channel: l2cap.LeCreditBasedChannel, echo: bool) -> None:
        '''Counts what a new channel receives (Bumble gives the credits back as K-frames arrive);
        with `echo`, writes each SDU back (re-cut into SDUs of the central's MTU).'''
        self.channel_bytes = self.channel_sdus = 0

        def on_sdu(sdu: bytes) -> None:
            self.channel_bytes += len(sdu)
            self.channel_sdus += 1
            if echo:
                channel.write(sdu)
            if self.channel_waiter is not None and self.channel_bytes >= self.channel_waiter[0]:
                if not self.channel_waiter[1].done():
                    self.channel_waiter[1].set_result(None)

        channel.sink = on_sdu

    async def channel_received(self, count: int) -> dict[str, Any]:
        if self.channel_bytes < count:
            reached = asyncio.get_running_loop().create_future()
            self.channel_waiter = (count, reached)
            try:
                await reached
            finally:
                self.channel_waiter = None
        return {'bytes': self.channel_bytes, 'sdus': self.channel_sdus}

    async def stream(self, slot: 'Slot', count: int, size: int, interval_ms: float) -> dict[str, Any]:
        '''Notifies `count` values of `size` bytes to the one connected central, as fast as the
        peer's host takes them (`interval_ms` 0) or one every `interval_ms` (a slow stream, for
        latency). Each value carries its sequence number and send time (STREAM_HEADER).

        Answers what happened, not what was asked: `notified` counts the values handed to the
        GATT server (which drops a notification silently when the central is not subscribed),
        `delivered` the notifications of this value that `slot`'s controller (the central's)
        then wrote to its host, counted on the wire (Slot.on_packet).'''
        connections = list(self.device.connections.values())
        if len(connections) != 1:
            raise RuntimeError(f'stream needs exactly one connection, not {len(connections)}')
        connection = connections[0]
        if size > connection.att_mtu - 3:
            raise RuntimeError(f'{size} bytes do not fit the ATT MTU {connection.att_mtu}')
        if size < STREAM_HEADER.size:
            raise RuntimeError(f'a streamed value holds at least {STREAM_HEADER.size} bytes, not {size}')
        server = self.device.gatt_server
        queue = connection.data_packet_queue
        padding = bytes(size - STREAM_HEADER.size)
        slot.watch_notifications(self.notifying.handle)
        loop = asyncio.get_running_loop()
        interval = interval_ms / 1000.0
        notified = 0
        cpu, wall = cpu_seconds(), time.perf_counter()
        began = loop.time()
        for sequence in range(count):
            if interval > 0:
                # A steady cadence (sends due at began + k × interval), whatever each send took.
                delay = began + sequence * interval - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
            value = STREAM_HEADER.pack(sequence, time.monotonic_ns()) + padding
            # Queued in the host (fragmented to the controller's 27-byte buffers, each fragment
            # completed by its own Number Of Completed Packets); wait when the backlog is long.
            await server.notify_subscriber(connection, self.notifying, value)
            notified += 1
            if queue.pending > STREAM_BACKLOG_PACKETS:
                await connection.drain()
        await connection.drain()
        sent_wall = time.perf_counter() - wall
        delivered = await slot.delivered(count, STREAM_DELIVERY_WAIT_S)
        return {'requested': count, 'notified': notified, 'delivered': delivered, 'size': size, 'interval_ms': interval_ms,
                'cpu_s': cpu_seconds() - cpu, 'wall_s': sent_wall}


class Radio:
    def __init__(self, args: argparse.Namespace):
        self.link = LocalLink()
        self.peer = BenchPeer(self.link, args.peer_interval_ms)
        self.advertisers = Advertisers(self.link)
        self.slots: list[Slot] = []

    def connected_slot(self) -> Slot:
        '''The slot whose host is connected now (the central a stream goes to).'''
        connected = [slot for slot in self.slots
                     if slot.transport is not None and not slot.transport.is_closing() and slot.controller.le_connections]
        if len(connected) != 1:
            raise RuntimeError(f'a stream needs exactly one connected central, not {len(connected)}')
        return connected[0]

    async def new_slot(self) -> int:
        slot = Slot(self.link, len(self.slots) + 1)
        self.slots.append(slot)
        return await slot.listen()

    async def handle(self, command: dict[str, Any]) -> bool:
        '''Runs one command and writes its reply; False to quit.'''
        name = command.get('cmd')
        if name == 'new_slot':
            emit('slot', port=await self.new_slot())
        elif name == 'stream':
            emit('streamed', **await self.peer.stream(self.connected_slot(), int(command['count']), int(command['size']),
                                                      float(command.get('interval_ms', 0))))
        elif name == 'l2cap_received':
            emit('l2cap_received', **await self.peer.channel_received(int(command['bytes'])))
        elif name == 'advertisers':
            count = int(command.get('count', 50))
            self.advertisers.start(count, float(command.get('interval_ms', 20)))
            emit('advertising', count=count)
        elif name == 'stop_advertisers':
            self.advertisers.stop()
            emit('advertisers_stopped')
        elif name == 'stats':
            emit('stats', cpu_s=cpu_seconds(), **packets_to_hosts)
        elif name == 'quit':
            emit('bye')
            return False
        else:
            raise ValueError(f'unknown command {name!r}')
        return True

    async def run(self, initial_slots: int) -> None:
        await self.peer.start()
        ports = [await self.new_slot() for _ in range(initial_slots)]
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        emit('ready', central_ports=ports, peer_address=PEER_ADDRESS, peer_address_type='random',
             service=SERVICE_UUID, notify=NOTIFY_UUID, read=READ_UUID)
        while line := await reader.readline():
            if not line.strip():
                continue
            try:
                if not await self.handle(json.loads(line)):
                    break
            except Exception as error:  # reply anyway: the driver waits for one line per command
                logger.exception('command failed: %s', line.strip())
                emit('error', message=f'{type(error).__name__}: {error}')
        self.advertisers.stop()
        for slot in self.slots:
            if slot.transport is not None:
                slot.transport.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--slots', type=int, default=0, help='slots to open before `ready` (more with new_slot)')
    parser.add_argument('--peer-interval-ms', type=float, default=20, help="the peer's advertising interval")
    parser.add_argument('--log-level', default='WARNING')
    args = parser.parse_args()
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format='radio %(levelname)s %(name)s: %(message)s')

    async def run() -> None:
        await Radio(args).run(args.slots)  # Bumble's controllers need a running loop

    asyncio.run(run())


if __name__ == '__main__':
    main()
