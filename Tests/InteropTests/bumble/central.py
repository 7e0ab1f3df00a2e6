#!/usr/bin/env python3
# A Bumble central (and scanner) for the interop tests of Bluejay's peripheral role
# (Tests/InteropTests/PeripheralInteropTests.swift).
#
# It reuses the rig of peer.py beside it: one Bumble LocalLink, controller A served to
# Bluejay's host over H4/TCP (a fresh controller per host connection; active scans get the
# advertiser's real scan response), and one controller B1 with a Bumble Device acting as the
# central. Same control protocol: JSON lines on stdin and stdout, logs on stderr.
#
#   stdout, first: {"event":"ready","port":N,"host_public_address":"F0:F1:F2:F3:F4:01",...}
#   stdin:  {"cmd":"read","handle":12,"id":3}
#   stdout: {"event":"ack","cmd":"read","id":3,"value":"0102"}
#
# An ATT Error Response is not a command failure: the ack carries "att_error" (the code, in
# decimal) so that tests can check which error Bluejay's server chose.
#
# Commands (handles are decimal, values hex):
#   scan {active}            report advertisements as "advertisement" events (each report once)
#   stop_scan
#   connect {address, address_type}          ack: handle, mtu
#   mtu {value}                              ack: mtu
#   discover                                 ack: services with characteristics, descriptors, includes
#   read {handle, long}                      ack: value | att_error (long: Read Blob after a full Read)
#   read_by_uuid {uuid}                      ack: values (Read By Type over the whole database)
#   write {handle, value, with_response}     ack: {} | att_error (long values: prepared writes)
#   write_long {handle, value}               ack: {} | att_error (Prepare Write + Execute Write always)
#   subscribe {handle, indicate}             "value" events: handle, value, indication, t (seconds); ack {} | att_error
#                                            (a refused subscription still reports what arrives; subscribing
#                                            again reports each value once)
#   unsubscribe {handle}
#   listen {handle}                          "value" events (listened: true) for notifications and indications of
#                                            that handle on this link, with no CCCD write: what a bonded central
#                                            whose subscription the server kept receives
#   confirmation_delay {ms}                  confirm indications only after this delay
#   disconnect {reason}
#   advertise {data, interval_ms}            the central advertises too (legacy PDUs, not connectable nor scannable)
#   stop_advertising
#   quit
# With `--plugin bluejay_hostile`, also `hostile` (raw requests, floods, recordings: README.md).

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import struct
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import peer as rig  # noqa: E402  (the link, the controllers and the control protocol)
from bumble import att, hci  # noqa: E402
from bumble.core import UUID, AdvertisingData  # noqa: E402
from bumble.device import AdvertisingType, Device, Peer  # noqa: E402

logger = logging.getLogger('central')

APPLE_COMPANY_ID = 0x004C


def decode_ibeacon(manufacturer: bytes) -> dict[str, Any] | None:
    '''Apple's iBeacon layout: type 0x02, length 0x15, UUID, major, minor (big-endian), power.'''
    if len(manufacturer) != 25 or struct.unpack_from('<H', manufacturer, 0)[0] != APPLE_COMPANY_ID:
        return None
    if manufacturer[2] != 0x02 or manufacturer[3] != 0x15:
        return None
    raw = manufacturer[4:20].hex().upper()
    uuid = f'{raw[0:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:32]}'
    major, minor = struct.unpack_from('>HH', manufacturer, 20)
    power = struct.unpack_from('b', manufacturer, 24)[0]
    return {'uuid': uuid, 'major': major, 'minor': minor, 'measured_power': power}


def describe_advertising_data(data: AdvertisingData) -> dict[str, Any]:
    '''What Bumble's own decoder reads in one report.'''
    fields: dict[str, Any] = {
        'structures': [AdvertisingData.ad_data_to_string(kind, value) for kind, value in data.ad_structures],
    }
    flags = data.get(AdvertisingData.FLAGS, raw=True)
    if flags is not None:
        fields['flags'] = flags[0] if flags else 0
    name = data.get(AdvertisingData.COMPLETE_LOCAL_NAME)
    if name is not None:
        fields['name'] = name
    short_name = data.get(AdvertisingData.SHORTENED_LOCAL_NAME)
    if short_name is not None:
        fields['short_name'] = short_name
    uuids: list[str] = []
    for kind in (
        AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS,
        AdvertisingData.INCOMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS,
        AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS,
        AdvertisingData.INCOMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS,
    ):
        for uuid in data.get_all(kind):
            uuids.extend(rig.uuid_text(item) for item in (uuid if isinstance(uuid, list) else [uuid]))
    if uuids:
        fields['uuids'] = uuids
    manufacturer = data.get(AdvertisingData.MANUFACTURER_SPECIFIC_DATA, raw=True)
    if manufacturer is not None and len(manufacturer) >= 2:
        fields['manufacturer'] = {
            'company': struct.unpack_from('<H', manufacturer, 0)[0],
            'data': manufacturer[2:].hex(),
        }
        beacon = decode_ibeacon(manufacturer)
        if beacon is not None:
            fields['ibeacon'] = beacon
    tx_power = data.get(AdvertisingData.TX_POWER_LEVEL, raw=True)
    if tx_power is not None and len(tx_power) == 1:
        fields['tx_power'] = struct.unpack('b', tx_power)[0]
    appearance = data.get(AdvertisingData.APPEARANCE, raw=True)
    if appearance is not None and len(appearance) == 2:
        fields['appearance'] = struct.unpack('<H', appearance)[0]
    service_data = data.get(AdvertisingData.SERVICE_DATA_16_BIT_UUID, raw=True)
    if service_data is not None and len(service_data) >= 2:
        fields['service_data'] = {'uuid': rig.uuid_text(UUID.from_bytes(service_data[:2])), 'data': service_data[2:].hex()}
    return fields


class Central:
    '''Controller B1 with a Bumble Device that scans, connects and runs GATT procedures.'''

    def __init__(self, owner: rig.Rig, link: rig.RigLink):
        self.owner = owner
        self.address = hci.Address(rig.CENTRAL_ADDRESS, hci.Address.RANDOM_DEVICE_ADDRESS)
        # The controller is None on Rootcanal (--controller rootcanal).
        self.controller, host = link.attach_device('B1')
        self.device = Device(name='Bumble Central', address=self.address, host=host)
        self.connection = None
        self.peer: Peer | None = None
        self.seen: set[tuple] = set()
        self.confirmation_delay = 0.0
        # One value callback per (handle, indicate), so subscribing again (after a refusal, or
        # after pairing) does not report each value twice.
        self.value_callbacks: dict[tuple[int, bool], Any] = {}
        self.started = time.monotonic()
        self.device.on('advertisement', self.on_advertisement)
        self.handlers = {
            'scan': self.cmd_scan,
            'stop_scan': self.cmd_stop_scan,
            'connect': self.cmd_connect,
            'mtu': self.cmd_mtu,
            'discover': self.cmd_discover,
            'read': self.cmd_read,
            'read_by_uuid': self.cmd_read_by_uuid,
            'write': self.cmd_write,
            'write_long': self.cmd_write_long,
            'subscribe': self.cmd_subscribe,
            'unsubscribe': self.cmd_unsubscribe,
            'listen': self.cmd_listen,
            'confirmation_delay': self.cmd_confirmation_delay,
            'disconnect': self.cmd_disconnect,
            'advertise': self.cmd_advertise,
            'stop_advertising': self.cmd_stop_advertising,
        }

    async def start(self) -> None:
        await self.device.power_on()

    def ready_fields(self) -> dict[str, Any]:
        return {'peer_address': rig.address_text(self.address), 'peer_address_type': 'random'}

    # Scanning ----------------------------------------------------------------------
    def on_advertisement(self, advertisement) -> None:
        key = (bytes(advertisement.address), advertisement.is_scan_response, bytes(advertisement.data_bytes))
        if key in self.seen:
            return
        self.seen.add(key)
        rig.emit(
            'advertisement',
            address=rig.address_text(advertisement.address),
            address_type=rig.address_type_text(advertisement.address),
            connectable=bool(advertisement.is_connectable),
            scan_response=bool(advertisement.is_scan_response),
            data=bytes(advertisement.data_bytes).hex(),
            t=round(time.monotonic() - self.started, 4),  # when Bumble heard it (seconds since start)
            **describe_advertising_data(advertisement.data),
        )

    async def cmd_scan(self, command):
        self.seen.clear()
        if self.device.scanning:
            await self.device.stop_scanning()
        await self.device.start_scanning(active=bool(command.get('active', True)), filter_duplicates=False)
        return {}

    async def cmd_stop_scan(self, command):
        if self.device.scanning:
            await self.device.stop_scanning()
        return {}

    # Advertising (for a host that scans while it advertises) -------------------------
    async def cmd_advertise(self, command):
        interval = float(command.get('interval_ms', 50))
        await self.device.start_advertising(
            advertising_type=AdvertisingType.UNDIRECTED,
            advertising_data=rig.hex_bytes(rig.require(command, 'data')),
            advertising_interval_min=interval,
            advertising_interval_max=interval,
        )
        return {}

    async def cmd_stop_advertising(self, command):
        await self.device.stop_advertising()
        return {}

    # Connection ----------------------------------------------------------------------
    def client(self):
        if self.peer is None:
            raise rig.CommandError('not connected')
        return self.peer.gatt_client

    async def cmd_connect(self, command):
        public = command.get('address_type', 'public') == 'public'
        kind = hci.Address.PUBLIC_DEVICE_ADDRESS if public else hci.Address.RANDOM_DEVICE_ADDRESS
        address = hci.Address(str(rig.require(command, 'address')), kind)
        if self.device.scanning:
            await self.device.stop_scanning()
        connection = await self.device.connect(address, timeout=float(command.get('timeout_s', 10)))
        self.connection = connection
        self.peer = Peer(connection)
        client = self.peer.gatt_client
        confirm = client.send_confirmation

        def delayed_confirmation(confirmation) -> None:
            if self.confirmation_delay > 0:
                asyncio.get_running_loop().call_later(self.confirmation_delay, confirm, confirmation)
            else:
                confirm(confirmation)

        client.send_confirmation = delayed_confirmation

        def on_disconnection(reason: int) -> None:
            if self.connection is connection:
                self.connection = None
                self.peer = None
            rig.emit('disconnected', handle=connection.handle, reason=int(reason))

        connection.on('disconnection', on_disconnection)
        rig.emit('connected', handle=connection.handle, peer_address=rig.address_text(connection.peer_address))
        return {'handle': connection.handle, 'mtu': client.mtu}

    async def cmd_mtu(self, command):
        return {'mtu': await self.client().request_mtu(int(rig.require(command, 'value')))}

    async def cmd_disconnect(self, command):
        return await rig.disconnect(self.connection, command)

    # GATT --------------------------------------------------------------------------
    async def cmd_discover(self, command):
        client = self.client()
        services = []
        for service in await client.discover_services():
            characteristics = []
            for characteristic in await client.discover_characteristics([], service):
                descriptors = await client.discover_descriptors(characteristic)
                characteristics.append({
                    'uuid': rig.uuid_text(characteristic.uuid),
                    'declaration': characteristic.handle - 1,
                    'handle': characteristic.handle,
                    'end': characteristic.end_group_handle,
                    'properties': int(characteristic.properties),
                    'descriptors': [{'uuid': rig.uuid_text(d.type), 'handle': d.handle} for d in descriptors],
                })
            included = await client.discover_included_services(service)
            services.append({
                'uuid': rig.uuid_text(service.uuid),
                'start': service.handle,
                'end': service.end_group_handle,
                'characteristics': characteristics,
                'included': [{'uuid': rig.uuid_text(s.uuid), 'start': s.handle, 'end': s.end_group_handle} for s in included],
            })
        return {'services': services}

    async def att(self, operation):
        try:
            return await operation()
        except att.ATT_Error as error:
            return {'att_error': int(error.error_code)}

    async def cmd_read(self, command):
        handle = int(rig.require(command, 'handle'))
        no_long_read = not bool(command.get('long', True))

        async def read():
            value = await self.client().read_value(handle, no_long_read=no_long_read)
            return {'value': bytes(value).hex()}

        return await self.att(read)

    async def cmd_read_by_uuid(self, command):
        uuid = UUID(rig.normalize_uuid(str(rig.require(command, 'uuid'))))
        values = await self.client().read_characteristics_by_uuid(uuid, None)
        return {'values': [bytes(value).hex() for value in values]}

    async def cmd_write(self, command):
        handle = int(rig.require(command, 'handle'))
        value = rig.hex_bytes(rig.require(command, 'value'))
        with_response = bool(command.get('with_response', True))

        async def write():
            await self.client().write_value(handle, value, with_response=with_response)
            return {}

        return await self.att(write)

    async def cmd_write_long(self, command):
        handle = int(rig.require(command, 'handle'))
        value = rig.hex_bytes(rig.require(command, 'value'))

        async def write():
            await self.client().write_long_value(handle, value)
            return {}

        return await self.att(write)

    def characteristic(self, handle: int):
        client = self.client()
        for service in client.services:
            for characteristic in service.characteristics:
                if characteristic.handle == handle:
                    return characteristic
        raise rig.CommandError(f'no discovered characteristic with value handle {handle} (send "discover" first)')

    async def cmd_subscribe(self, command):
        characteristic = self.characteristic(int(rig.require(command, 'handle')))
        indicate = bool(command.get('indicate', False))
        handle = characteristic.handle

        def on_value(value: bytes) -> None:
            rig.emit('value', handle=handle, value=bytes(value).hex(), indication=indicate,
                     t=round(time.monotonic() - self.started, 4))

        on_value = self.value_callbacks.setdefault((handle, indicate), on_value)

        async def subscribe():
            await self.client().subscribe(characteristic, on_value, prefer_notify=not indicate)
            return {}

        return await self.att(subscribe)

    async def cmd_listen(self, command):
        handle = int(rig.require(command, 'handle'))
        client = self.client()

        def on_value(indication: bool):
            def emit(value: bytes) -> None:
                rig.emit('value', handle=handle, value=bytes(value).hex(), indication=indication, listened=True,
                         t=round(time.monotonic() - self.started, 4))
            return emit

        # Bumble's client calls these for each Handle Value Notification or Indication of the
        # handle (and confirms indications): no Write Request leaves.
        client.notification_subscribers.setdefault(handle, set()).add(on_value(False))
        client.indication_subscribers.setdefault(handle, set()).add(on_value(True))
        return {}

    async def cmd_unsubscribe(self, command):
        characteristic = self.characteristic(int(rig.require(command, 'handle')))
        await self.client().unsubscribe(characteristic, force=True)
        return {}

    async def cmd_confirmation_delay(self, command):
        self.confirmation_delay = float(command.get('ms', 0)) / 1000.0
        return {}

    async def stop(self) -> None:
        if self.connection is not None:
            try:
                await self.connection.disconnect(rig.REMOTE_USER_TERMINATED)
            except Exception:  # the link may be gone already
                logger.exception('cannot disconnect on exit')


async def main() -> int:
    parser = argparse.ArgumentParser(description="Bumble central for Bluejay's peripheral interop tests")
    parser.add_argument('--log-level', default=os.environ.get('BLUEJAY_PEER_LOG', 'INFO'))
    parser.add_argument('--extended-controller', action='store_true',
                        help='controller A claims LE Extended Advertising (advertising sets, extended scanning)')
    rig.add_controller_variant_argument(parser)
    parser.add_argument('--plugin', action='append', default=[],
                        help='module beside this script whose install(role, rig) adds behaviour (repeatable)')
    rig.add_controller_arguments(parser)
    args = parser.parse_args()
    rig.check_controller_arguments(parser, args)

    def make_role(owner: rig.Rig, link: rig.RigLink) -> Central:
        central = Central(owner, link)
        for plugin in args.plugin:
            importlib.import_module(plugin).install(central, owner)
        return central

    return await rig.serve(args, make_role, 'central')


if __name__ == '__main__':
    try:
        sys.exit(asyncio.run(main()))
    except BrokenPipeError:
        sys.exit(0)
