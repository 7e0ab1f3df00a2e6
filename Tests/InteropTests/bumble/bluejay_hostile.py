# A peer that lies, for the hostile-peer interop tests (Tests/InteropTests/HostilePeerInteropTests.swift).
# Loaded with `--plugin bluejay_hostile` by peer.py (either role) and by central.py.
#
# It adds one command, `hostile`, whose `mode` says what to do (README.md, "Hostile peers"):
#
#   answer    the next `times` requests (of `opcode`, or any) get the raw ATT PDUs `pdus`
#             instead of the GATT server's answer (none: never answered); with `serve` the
#             server answers too, after them; `skip` lets that many pass first; with
#             `disconnect` (an HCI reason) the link is dropped right after. `opcode` may be a
#             list, and may name any client PDU (a confirmation too). Peripheral role only.
#   send      sends the raw payload `pdu` (or each of `pdus`) `count` times on L2CAP channel
#             `cid` (4 ATT, 5 LE signalling, 6 SMP). `path`: "host" goes through Bumble's host
#             and controller like any PDU (fragmented, flow-controlled); "inject" hands each
#             PDU straight to Bluejay's host as one ACL packet from controller A, as fast as
#             Python can (a flood no radio could carry); with `pause_every` N, it lets the
#             other devices of the rig run after every N packets, so that their PDUs reach
#             Bluejay's host in the middle of the flood.
#   acl       hands raw ACL packets to Bluejay's host from controller A: `fragments`, each
#             {"pb": 0|1|2, "data": hex} (pb 1 continues a PDU, 2 starts one), `repeat` times.
#   push      sends one Handle Value Notification (or, with `indicate`, Indication) of `value`
#             on the characteristic `uuid`, raw: whoever subscribed, and nothing awaited (no
#             confirmation either). Peripheral role only.
#   request   sends the raw payload `pdu` on `cid` (default 4) and waits up to `timeout_ms`
#             for the next PDU Bluejay's host sends on that channel; ack `response` (hex or null).
#   record    records what Bluejay's host sends on channel `cid`: each PDU as an `l2cap`
#             event ({"cid":5,"pdu":"0102..."}) when `events` (default true), and kept for
#             `recorded`. `on: false` stops.
#   recorded  ack `pdus`: the PDUs recorded on `cid` so far (hex); `clear` forgets them.
#   address   peripheral role: this device takes the random (static) address `address`:
#             advertising stops, LE Set Random Address, advertising starts again from it. A
#             spoofer takes a bonded peer's address this way (the real one steps aside first:
#             the link delivers to the first controller with the address).
#   move_service  peripheral role: the service `uuid` is taken out of the database and put back
#             at its end, so that its attributes get other handles (a different database).
#   mute_smp  with `on` (default true) this Bumble device's own Security Manager ignores every
#             SMP PDU, so only the test's raw PDUs on channel 6 answer Bluejay's host (with
#             `record` on cid 6 to see what it sends); `on: false` gives it back.
#   off       forgets every answer rule and recording.
#
# Every hostile PDU is built by the test: this file checks nothing about what it sends.

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any, Callable

from bumble import att, hci

import peer

logger = logging.getLogger('hostile')

# peer.py run as a script is `__main__`, and `import peer` loads a second copy: raise the
# CommandError its command loop catches (central.py's is peer's own).
CommandError = getattr(sys.modules['__main__'], 'CommandError', peer.CommandError)

ATT_CID = 0x0004


class Endpoint:
    '''One Bumble device of the rig and how to find its link to Bluejay's host.'''

    def __init__(self, name: str, device, controller, connection: Callable[[], Any],
                 value_handle: Callable[[dict[str, Any]], int] | None = None,
                 start_advertising: Callable[[], Any] | None = None):
        self.name = name
        # Starts the device's advertising as the rig does (peripheral role).
        self.start_advertising = start_advertising
        # The value handle of a characteristic named by a command's `uuid` (peripheral role).
        self.value_handle = value_handle
        self.device = device
        self.controller = controller
        self.connection = connection
        # Answer rules: dicts with opcodes (None: any request), pdus, times (-1: forever), serve,
        # skip, disconnect (a reason, or None).
        self.rules: list[dict[str, Any]] = []
        # Channels recorded: cid -> emit events?
        self.recording: dict[int, bool] = {}
        self.recorded: dict[int, list[bytes]] = {}
        # Waiters of `request`: (cid, future).
        self.waiters: list[tuple[int, asyncio.Future]] = []
        device.host.on('l2cap_pdu', self.on_l2cap_pdu)

    def link(self):
        connection = self.connection()
        if connection is None:
            raise CommandError(f'{self.name} has no connection')
        return connection

    # What Bluejay's host sends ------------------------------------------------------------
    def on_l2cap_pdu(self, _handle: int, cid: int, pdu: bytes) -> None:
        pdu = bytes(pdu)
        for waiter in [w for w in self.waiters if w[0] == cid]:
            self.waiters.remove(waiter)
            if not waiter[1].done():
                waiter[1].set_result(pdu)
        if cid in self.recording:
            self.recorded.setdefault(cid, []).append(pdu)
            if self.recording[cid]:
                peer.emit('l2cap', peripheral=self.name, cid=cid, pdu=pdu.hex())

    # Answering requests (peripheral role) -------------------------------------------------
    def intercept(self, server) -> None:
        '''Wraps the GATT server's entry point so that answer rules see requests first.'''
        original = server.on_gatt_pdu

        def on_gatt_pdu(bearer, pdu):
            rule = self.rule_for(pdu)
            if rule is None:
                return original(bearer, pdu)
            peer.emit('hostile_answered', peripheral=self.name, opcode=pdu.op_code, request=bytes(pdu).hex())
            connection = self.connection()
            for raw in rule['pdus']:
                if connection is not None:
                    connection.send_l2cap_pdu(ATT_CID, raw)
            if rule['disconnect'] is not None and connection is not None:
                # The request stays unanswered: the link goes while it is in flight.
                asyncio.get_running_loop().create_task(connection.disconnect(rule['disconnect']))
                return None
            if rule['serve']:
                return original(bearer, pdu)
            return None

        server.on_gatt_pdu = on_gatt_pdu

    def rule_for(self, pdu) -> dict[str, Any] | None:
        is_request = att.Opcode(pdu.op_code).name.endswith('_REQUEST')
        for rule in self.rules:
            if (rule['opcodes'] is None and is_request) or (rule['opcodes'] is not None and pdu.op_code in rule['opcodes']):
                if rule['skip'] > 0:
                    rule['skip'] -= 1
                    return None
                if rule['times'] > 0:
                    rule['times'] -= 1
                    if rule['times'] == 0:
                        self.rules.remove(rule)
                return rule
        return None

    # Sending ------------------------------------------------------------------------------
    def to_host(self):
        '''Controller A and its handle for this link: where injected packets come from.'''
        connection = self.link()
        ours = next((c for c in self.controller.le_connections.values() if c.handle == connection.handle), None)
        if ours is None:
            raise CommandError(f'{self.name}: no link-layer connection for handle {connection.handle}')
        other = self.controller.link.find_le_controller(ours.peer_address)
        if other is None:
            raise CommandError(f'{self.name}: controller A is not on the link')
        theirs = next((c for c in other.le_connections.values() if c.peer_address == ours.self_address), None)
        if theirs is None:
            raise CommandError(f'{self.name}: controller A has no connection to {ours.self_address}')
        return other, theirs.handle

    def inject(self, packets: list[tuple[int, bytes]]) -> None:
        controller, handle = self.to_host()
        for boundary, data in packets:
            controller.send_hci_packet(hci.HCI_AclDataPacket(handle, boundary, 0, len(data), data))

    async def send(self, cid: int, pdus: list[bytes], count: int, path: str, pause_every: int = 0) -> int:
        connection = self.link()
        sent = 0
        if path == 'inject':
            frames = [(0x02, len(pdu).to_bytes(2, 'little') + cid.to_bytes(2, 'little') + pdu) for pdu in pdus]
            for index in range(count):
                self.inject(frames)
                sent += len(frames)
                if pause_every > 0 and (index + 1) % pause_every == 0:
                    await asyncio.sleep(0)
            return sent
        if path != 'host':
            raise CommandError('path must be "host" or "inject"')
        for _ in range(count):
            for pdu in pdus:
                connection.send_l2cap_pdu(cid, pdu)
                sent += 1
        await connection.drain()
        return sent


def hex_list(command: dict[str, Any], key: str) -> list[bytes]:
    values = command.get(key, [])
    if not isinstance(values, list):
        raise CommandError(f'"{key}" must be a list of hex strings')
    return [peer.hex_bytes(str(value)) for value in values]


def make_handler(endpoints: Callable[[dict[str, Any]], Endpoint]):
    async def hostile(command: dict[str, Any]) -> dict[str, Any]:
        endpoint = endpoints(command)
        mode = peer.require(command, 'mode')
        cid = int(command.get('cid', ATT_CID))
        if mode == 'answer':
            opcode = command.get('opcode')
            disconnect = command.get('disconnect')
            rule = {
                'opcodes': None if opcode is None else [int(o) for o in (opcode if isinstance(opcode, list) else [opcode])],
                'pdus': hex_list(command, 'pdus'),
                'times': int(command.get('times', 1)),
                'serve': bool(command.get('serve', False)),
                'skip': int(command.get('skip', 0)),
                'disconnect': None if disconnect is None else int(disconnect),
            }
            if rule['times'] == 0:
                raise CommandError('"times" is at least 1 (or -1: forever)')
            endpoint.rules.append(rule)
            return {'rules': len(endpoint.rules)}
        if mode == 'send':
            pdus = hex_list(command, 'pdus') if 'pdus' in command else [peer.hex_bytes(str(peer.require(command, 'pdu')))]
            sent = await endpoint.send(cid, pdus, int(command.get('count', 1)), str(command.get('path', 'host')),
                                       int(command.get('pause_every', 0)))
            return {'sent': sent}
        if mode == 'acl':
            fragments = command.get('fragments')
            if not isinstance(fragments, list) or not fragments:
                raise CommandError('"fragments" must be a non-empty list of {"pb":..., "data":...}')
            packets = [(int(f.get('pb', 2)), peer.hex_bytes(str(f.get('data', '')))) for f in fragments]
            for _ in range(int(command.get('repeat', 1))):
                endpoint.inject(packets)
            return {'sent': len(packets) * int(command.get('repeat', 1))}
        if mode == 'push':
            if endpoint.value_handle is None:
                raise CommandError('push is for the peripheral role')
            handle = endpoint.value_handle(command)
            opcode = 0x1D if command.get('indicate') else 0x1B
            pdu = bytes([opcode]) + handle.to_bytes(2, 'little') + peer.hex_bytes(str(command.get('value', '')))
            endpoint.link().send_l2cap_pdu(ATT_CID, pdu)
            return {'handle': handle}
        if mode == 'request':
            connection = endpoint.link()
            future = asyncio.get_running_loop().create_future()
            endpoint.waiters.append((cid, future))
            connection.send_l2cap_pdu(cid, peer.hex_bytes(str(peer.require(command, 'pdu'))))
            try:
                response = await asyncio.wait_for(future, timeout=float(command.get('timeout_ms', 2000)) / 1000.0)
            except asyncio.TimeoutError:
                return {'response': None}
            finally:
                endpoint.waiters = [w for w in endpoint.waiters if w[1] is not future]
            return {'response': response.hex()}
        if mode == 'record':
            if command.get('on', True):
                endpoint.recording[cid] = bool(command.get('events', True))
            else:
                endpoint.recording.pop(cid, None)
            return {}
        if mode == 'recorded':
            pdus = endpoint.recorded.get(cid, [])
            result = {'pdus': [pdu.hex() for pdu in pdus]}
            if command.get('clear'):
                endpoint.recorded[cid] = []
            return result
        if mode == 'address':
            if endpoint.start_advertising is None:
                raise CommandError('address is for the peripheral role')
            device = endpoint.device
            address = hci.Address(str(peer.require(command, 'address')), hci.Address.RANDOM_DEVICE_ADDRESS)
            # Right after a disconnection the advertising restarts by itself (auto_restart):
            # let the link go and the restart finish first, or it would keep the old address.
            for _ in range(300):
                if not device.connections and device.is_advertising:
                    break
                await asyncio.sleep(0.01)
            # The random address cannot change while advertising (Core 6.0, Vol 4, Part E, 7.8.4).
            if device.is_advertising:
                await device.stop_advertising()
            await device.send_sync_command(hci.HCI_LE_Set_Random_Address_Command(random_address=address))
            device.random_address = address
            await endpoint.start_advertising()
            return {'address': peer.address_text(address)}
        if mode == 'move_service':
            server = endpoint.device.gatt_server
            uuid = peer.normalize_uuid(str(peer.require(command, 'uuid')))
            service = next((s for s in server.services if peer.uuid_text(s.uuid) == uuid), None)
            if service is None:
                raise CommandError(f'no service {uuid}')
            start, end = service.handle, service.end_group_handle
            server.attributes = [a for a in server.attributes if not start <= a.handle <= end]
            server.services.remove(service)
            server.attributes_by_handle.clear()
            server.add_service(service)
            server.attributes_by_handle.clear()
            return {'start': service.handle, 'end': service.end_group_handle}
        if mode == 'mute_smp':
            manager = endpoint.device.smp_manager
            if command.get('on', True):
                # Device.on_smp_pdu looks the manager's method up on each PDU.
                manager.on_smp_pdu = lambda _connection, _pdu: None
            elif 'on_smp_pdu' in vars(manager):
                del manager.on_smp_pdu
            return {}
        if mode == 'off':
            endpoint.rules.clear()
            endpoint.recording.clear()
            endpoint.recorded.clear()
            return {}
        raise CommandError(f'unknown hostile mode {mode!r}')

    return hostile


def install(role, rig) -> None:
    peripherals = getattr(role, 'peripherals', None)
    if peripherals is not None:
        endpoints = []
        for p in peripherals:
            endpoint = Endpoint(
                str(p.index), p.device, p.controller, (lambda p=p: p.connections[0] if p.connections else None),
                (lambda command, p=p: p.characteristic(command).handle), p.start_advertising,
            )
            endpoint.intercept(p.device.gatt_server)
            endpoints.append(endpoint)

        def target(command: dict[str, Any]) -> Endpoint:
            return endpoints[role.target(command).index - 1]
    else:
        # A central (peer.py --role central, or central.py): one device, one link.
        endpoint = Endpoint('central', role.device, role.controller, lambda: role.connection)

        def target(command: dict[str, Any]) -> Endpoint:
            return endpoint

    role.handlers['hostile'] = make_handler(target)
