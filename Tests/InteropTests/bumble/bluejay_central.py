# One of the rig's peripherals as a central, for tests of Bluejay's peripheral role inside the
# Linux guest (Tests/InteropTests/BlueZGuestTests.swift: PeripheralManager on BlueZ). Loaded
# with `--plugin bluejay_central` by peer.py (peripheral role); the device of peripheral
# `peripheral` (default: the last) stops advertising and connects out.
#
# Commands:
#   central_find       name, timeout_s (30), peripheral   scans for an advertisement whose data carries
#                      `name`; ack: address, data (hex, with the scan response), connectable
#   central_connect    name, timeout_s (30), peripheral   scans for an advertisement whose data
#                      carries `name`, connects to its address and discovers every service and
#                      characteristic; ack: address, address_type, services (uuid, characteristics)
#   central_read       uuid   ack: value (hex), or error (Bumble's ATT error name)
#   central_write      uuid, value (hex), with_response (true)   ack, or error
#   central_subscribe  uuid, indicate (false)   ack
#   central_disconnect ack once the link is down
# Events:
#   {"event":"central_value","uuid":U,"value":HEX}   a notification or an indication
#   {"event":"central_disconnected","reason":N}

from __future__ import annotations

import asyncio
import sys
from typing import Any

from bumble import hci
from bumble.device import Peer

import peer

emit = getattr(sys.modules['__main__'], 'emit', peer.emit)
CommandError = getattr(sys.modules['__main__'], 'CommandError', getattr(peer, 'CommandError', RuntimeError))


def install(role, rig) -> None:
    state: dict[str, Any] = {'peer': None, 'connection': None}

    def device_of(command: dict[str, Any]):
        peripherals = getattr(role, 'peripherals', [])
        if not peripherals:
            raise CommandError('bluejay_central needs the peripheral role')
        index = int(command.get('peripheral', len(peripherals)))
        return peripherals[index - 1].device

    def characteristic(command: dict[str, Any]):
        remote = state['peer']
        if remote is None:
            raise CommandError('not connected')
        uuid = peer.normalize_uuid(str(peer.require(command, 'uuid')))
        for service in remote.services:
            for found in service.characteristics:
                if peer.uuid_text(found.uuid) == uuid:
                    return found
        raise CommandError(f'no characteristic {uuid}')

    async def find(command: dict[str, Any]):
        device = device_of(command)
        name = str(peer.require(command, 'name')).encode()
        found: asyncio.Future = asyncio.get_running_loop().create_future()

        def on_advertisement(advertisement) -> None:
            if not found.done() and name in bytes(advertisement.data):
                found.set_result(advertisement)

        if device.is_advertising:
            await device.stop_advertising()
        device.on('advertisement', on_advertisement)
        try:
            await device.start_scanning(active=True)
            advertisement = await asyncio.wait_for(found, float(command.get('timeout_s', 30)))
        finally:
            device.remove_listener('advertisement', on_advertisement)
            if device.scanning:
                await device.stop_scanning()
        return device, advertisement

    async def cmd_find(command: dict[str, Any]):
        _, advertisement = await find(command)
        return {'address': peer.address_text(advertisement.address), 'data': bytes(advertisement.data).hex(),
                'connectable': bool(advertisement.is_connectable)}

    async def cmd_connect(command: dict[str, Any]):
        device, advertisement = await find(command)
        address = advertisement.address
        connection = await device.connect(address, timeout=float(command.get('timeout_s', 30)))
        state['connection'] = connection
        remote = Peer(connection)
        state['peer'] = remote

        def on_disconnection(reason: int) -> None:
            state['connection'] = None
            state['peer'] = None
            emit('central_disconnected', reason=int(reason))

        connection.on('disconnection', on_disconnection)
        await remote.discover_services()
        services = []
        for service in remote.services:
            await service.discover_characteristics()
            services.append({'uuid': peer.uuid_text(service.uuid),
                             'characteristics': [peer.uuid_text(c.uuid) for c in service.characteristics]})
        return {'address': peer.address_text(address),
                'address_type': 'public' if address.address_type == hci.Address.PUBLIC_DEVICE_ADDRESS else 'random',
                'services': services}

    async def cmd_read(command: dict[str, Any]):
        try:
            value = await characteristic(command).read_value()
        except Exception as error:  # an ATT error: the test asserts which
            return {'error': f'{type(error).__name__}: {error}'}
        return {'value': bytes(value).hex()}

    async def cmd_write(command: dict[str, Any]):
        try:
            await characteristic(command).write_value(peer.hex_bytes(peer.require(command, 'value')),
                                                      with_response=bool(command.get('with_response', True)))
        except Exception as error:
            return {'error': f'{type(error).__name__}: {error}'}
        return {}

    async def cmd_subscribe(command: dict[str, Any]):
        found = characteristic(command)
        uuid = peer.uuid_text(found.uuid)

        def on_value(value: bytes) -> None:
            emit('central_value', uuid=uuid, value=bytes(value).hex())

        await found.subscribe(on_value, prefer_notify=not command.get('indicate', False))
        return {}

    async def cmd_disconnect(command: dict[str, Any]):
        connection = state['connection']
        if connection is not None:
            await connection.disconnect()
        return {}

    role.handlers.update({'central_find': cmd_find, 'central_connect': cmd_connect, 'central_read': cmd_read, 'central_write': cmd_write,
                          'central_subscribe': cmd_subscribe, 'central_disconnect': cmd_disconnect})
