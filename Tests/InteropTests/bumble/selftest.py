#!/usr/bin/env python3
# Checks peer.py with a Bumble host standing in for Bluejay's host: the rig works on its own,
# so a failing interop test points at Bluejay, not at the rig. Run with `make rig-selftest`
# (or .venv/bin/python Tests/InteropTests/bumble/selftest.py). Not part of `make test`.

from __future__ import annotations

import asyncio
import json
import os
import struct
import sys
import time

from bumble import hci
from bumble.core import UUID
from bumble.device import Device, Peer
from bumble.transport import open_transport

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'peer.py')
LONG = '6E400004-B5A3-F393-E0A9-E50E24DCCA9E'
UART_RX = '6E400002-B5A3-F393-E0A9-E50E24DCCA9E'
UART_TX = '6E400003-B5A3-F393-E0A9-E50E24DCCA9E'
INDICATING = '6E400005-B5A3-F393-E0A9-E50E24DCCA9E'
READ_REFUSED = '6E400006-B5A3-F393-E0A9-E50E24DCCA9E'
WRITE_SINK = '6E400007-B5A3-F393-E0A9-E50E24DCCA9E'


class PeerProcess:
    def __init__(self, *arguments: str):
        self.arguments = arguments
        self.events: list[dict] = []
        self.new_event = asyncio.Event()

    async def __aenter__(self) -> PeerProcess:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, PEER, *self.arguments,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )
        self.reader = asyncio.create_task(self.read())
        self.ready = await self.wait('ready')
        return self

    async def __aexit__(self, *exc) -> None:
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 5)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        assert self.process.returncode == 0, f'peer exited with {self.process.returncode}'

    async def read(self) -> None:
        while line := await self.process.stdout.readline():
            self.events.append(json.loads(line))
            self.new_event.set()

    def send(self, **command) -> None:
        self.process.stdin.write((json.dumps(command) + '\n').encode())

    async def wait(self, name: str, timeout: float = 10, **fields) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for index, event in enumerate(self.events):
                if event['event'] == name and all(event.get(k) == v for k, v in fields.items()):
                    del self.events[index]
                    return event
            self.new_event.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f'no {name} {fields}; events: {self.events[-10:]}')
            try:
                await asyncio.wait_for(self.new_event.wait(), remaining)
            except TimeoutError:
                pass

    async def command(self, cmd: str, **fields) -> dict:
        self.send(cmd=cmd, **fields)
        deadline = time.monotonic() + 30
        while True:
            for index, event in enumerate(self.events):
                if event['event'] in ('ack', 'error') and event.get('cmd') == cmd:
                    del self.events[index]
                    assert event['event'] == 'ack', event
                    return event
            self.new_event.clear()
            await asyncio.wait_for(self.new_event.wait(), max(0.01, deadline - time.monotonic()))


def check(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)
    print(f'ok - {message}')


async def host_device(port: int, address: str = 'C0:00:00:00:00:AA'):
    transport = await open_transport(f'tcp-client:127.0.0.1:{port}')
    device = Device.with_hci('host', hci.Address(address), transport.source, transport.sink)
    await device.power_on()
    return transport, device


async def peripheral_role() -> None:
    async with PeerProcess('--peripherals', '2') as peer:
        port = peer.ready['port']
        transport, device = await host_device(port)
        await peer.wait('host_connected')

        # Scanning: the real scan response arrives with active scanning.
        seen = {}
        device.on('advertisement', lambda a: seen.setdefault(str(a.address.to_string(False)), a))
        await device.start_scanning(active=True)
        for _ in range(100):
            if len(seen) >= 2:
                break
            await asyncio.sleep(0.05)
        await device.stop_scanning()
        first = seen.get('F0:00:00:00:00:01')
        check(first is not None and len(seen) == 2, 'both peripherals advertise')
        check(bytes.fromhex('07FFFFFF01020304') in bytes(first.data), 'manufacturer data in the advertising data')
        check(b'Bluejay Peer 1' in bytes(first.data), 'the name of the scan response arrives')

        # GATT
        connection = await device.connect(hci.Address('F0:00:00:00:00:01'))
        event = await peer.wait('connected', peripheral=1)
        check(event['peer_address'] == 'C0:00:00:00:00:AA', 'the peripheral sees our address')
        gatt = Peer(connection)
        await gatt.request_mtu(247)
        await peer.wait('mtu', peripheral=1, value=247)
        await gatt.discover_services()
        await gatt.discover_characteristics()
        by_uuid = {}
        for service in gatt.services:
            for characteristic in service.characteristics:
                by_uuid[str(characteristic.uuid.to_hex_str()).upper()] = characteristic

        def find(uuid: str):
            return by_uuid[uuid.replace('-', '')]

        check('2A05' in by_uuid, 'Service Changed is present')
        check((await find('2A25').read_value()) == b'SN-0001', 'serial number')
        check((await find('2A19').read_value()) == bytes([87]), 'battery level')
        long_value = await find(LONG).read_value()
        check(long_value == bytes(i % 256 for i in range(600)), 'long read of 600 bytes')
        new_value = bytes((i * 7) % 256 for i in range(600))
        await find(LONG).write_value(new_value, with_response=True)
        event = await peer.wait('written', uuid=LONG)
        check(event['value'] == new_value.hex() and event['prepared'], 'long write of 600 bytes')
        check((await find(LONG).read_value()) == new_value, 'long value reads back')
        try:
            await find(READ_REFUSED).read_value()
            check(False, 'read refused')
        except Exception as error:
            check(getattr(error, 'error_code', None) == 0x02, f'read refused with 0x02 ({error})')
        await find(WRITE_SINK).write_value(b'\x01\x02', with_response=False)
        event = await peer.wait('written', uuid=WRITE_SINK)
        check(event['with_response'] is False, 'write without response recorded')
        received = await peer.command('received', uuid=WRITE_SINK)
        check(received['values'] == ['0102'], 'received values')

        # Notifications in order
        values: list[bytes] = []
        await find('2A37').subscribe(values.append)
        await peer.wait('subscribed', uuid='2A37')
        await peer.command('notify', uuid='2A37', count=200)
        for _ in range(100):
            if len(values) >= 200:
                break
            await asyncio.sleep(0.02)
        sequence = [struct.unpack('<H', v[1:3])[0] for v in values]
        check(sequence == list(range(200)), '200 notifications in order')

        # Indications
        indications: list[bytes] = []
        await find(INDICATING).subscribe(indications.append, prefer_notify=False)
        await peer.wait('subscribed', uuid=INDICATING)
        await peer.command('indicate', uuid=INDICATING, count=5)
        check([struct.unpack('<I', v)[0] for v in indications] == list(range(5)), '5 indications confirmed')

        # UART with random chunks
        answer: list[bytes] = []
        await find(UART_TX).subscribe(answer.append)
        await peer.command('uart_mode', chunks='random')
        await find(UART_RX).write_value(bytes([0xA5]) + struct.pack('<H', 1000), with_response=True)
        event = await peer.wait('uart_answered')
        await asyncio.sleep(0.1)
        check(b''.join(answer) == bytes(i % 256 for i in range(1000)), f'UART answer in chunks {event["chunks"][:8]}...')

        # Service Changed
        changes: list[bytes] = []
        await find('2A05').subscribe(changes.append, prefer_notify=False)
        added = await peer.command('add_service')
        check(added['indicated'] == 1 and changes == [struct.pack('<HH', added['start'], added['end'])], 'service changed on add')
        removed = await peer.command('remove_service')
        check(removed['start'] == added['start'], 'service changed on remove')

        # Dropped on read
        await peer.command('drop_on_next_read', uuid='2A29')
        try:
            await asyncio.wait_for(find('2A29').read_value(), 5)
        except (Exception, asyncio.CancelledError):
            pass
        event = await peer.wait('disconnected', peripheral=1)
        check(event['reason'] == 0x13, 'the peripheral drops the link on read')

        # Stale links: a host that goes away without disconnecting
        connection = await device.connect(hci.Address('F0:00:00:00:00:02'))
        await peer.wait('connected', peripheral=2)
        await transport.close()
        event = await peer.wait('disconnected', peripheral=2)
        check(event['reason'] == 0x08, 'a vanished host ends its links (reason 0x08)')
        transport, device = await host_device(port)
        connection = await device.connect(hci.Address('F0:00:00:00:00:02'))
        await peer.wait('connected', peripheral=2)
        check(True, 'the next host connects to the same peripheral again')
        await connection.disconnect()
        await peer.wait('disconnected', peripheral=2)

        # A host that connects with its public address gets data through.
        connection = await device.connect(
            hci.Address('F0:00:00:00:00:01'), own_address_type=hci.OwnAddressType.PUBLIC
        )
        event = await peer.wait('connected', peripheral=1)
        check(event['peer_address_type'] == 'public', 'connected with the public address')
        gatt = Peer(connection)
        service = (await gatt.discover_service('180A'))[0]
        serial = [c for c in await service.discover_characteristics() if c.uuid == UUID('2A25')][0]
        check((await serial.read_value()) == b'SN-0001', 'GATT works over a public-address link')
        await connection.disconnect()
        await transport.close()


async def central_role() -> None:
    async with PeerProcess('--role', 'central') as peer:
        transport, device = await host_device(peer.ready['port'], 'C0:00:00:00:00:BB')
        await device.start_advertising(
            advertising_data=bytes([2, 1, 6, 5, 9]) + b'Host', scan_response_data=bytes([3, 0xFF, 0xAA, 0xBB])
        )
        event = await peer.wait('advertisement', address='C0:00:00:00:00:BB')
        check('0509486f7374' in event['data'] and '03ffaabb' in event['data'], 'the central sees our advertising and scan response')
        await peer.command('connect', address='C0:00:00:00:00:BB')
        event = await peer.wait('database')
        check(any(s['uuid'] == '1801' for s in event['services']), 'the central discovers our database')
        await peer.command('disconnect')
        await peer.wait('disconnected')
        await transport.close()


async def main() -> None:
    await peripheral_role()
    await central_role()
    print('rig selftest passed')


if __name__ == '__main__':
    asyncio.run(main())
