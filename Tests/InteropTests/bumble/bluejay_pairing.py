# Pairing and encryption for the Security Manager interop tests
# (Tests/InteropTests/PairingInteropTests.swift). Loaded with `--plugin bluejay_pairing` by
# peer.py, in either role.
#
# Every Bumble device of the rig gets a pairing configuration (default: LE Secure Connections,
# bonding, no MITM, NoInputNoOutput) and, in the peripheral role, a service
# 6E400301-B5A3-F393-E0A9-E50E24DCCA9E with two readable characteristics:
#   6E400302-...  needs an encrypted link            (value "secret")
#   6E400303-...  needs an authenticated (MITM) link (value "top secret")
#
# Commands:
#   pairing_config  io (none|display|keyboard|yesno|keyboard_display), sc, mitm, bonding (bools),
#                   passkey (the one this side displays), typed (what this side types; default:
#                   the passkey the rig last saw displayed by either side), confirm (numeric
#                   comparison answer), accept (accept incoming pairing), key_size (the maximum
#                   encryption key size offered, 7..16), identity (an address "AA:BB:..." this
#                   side distributes in Identity Address Information instead of its own: a device
#                   claiming another's identity; null for its own), identity_type (random|public),
#                   irk (hex, as sent; peripheral role): the IRK the device distributes (Bumble's default
#                   is all zeros, which Bluejay takes as no IRK),
#                   keypress (set the Keypress flag of AuthReq; when this side types a passkey it
#                   then sends Keypress Notifications: started, 3 digits, 1 erased, 4 digits,
#                   completed, and emits keypresses_sent), legacy_tk (hex, the 128-bit value most
#                   significant octet first: LE legacy OOB with this TK; needs sc false; null: none).
#                   With "peripheral": k (peripheral role) only that device's settings change
#                   (a copy of the shared ones, made at its first such command). Unknown keys
#                   refused.
#   initiate        pairs now: the central's `connection.pair()`, or, on a peripheral,
#                   a Security Request and the central's pairing; ack {"paired": bool, "error": text};
#                   with "wait": false (central) the ack comes at once and pairing_done follows.
#   A Bumble central answers a Security Request by encrypting with stored keys, else pairing.
#   encrypt         central role: encrypts with the stored keys; ack {"encrypted": bool, "error": ...}
#   oob             makes this side's LE Secure Connections OOB data (ack {"r","c"}: hex, most
#                   significant octet first) and, with peer_r/peer_c, takes the peer's
#   forget_keys     forgets every stored key (a peer that lost its bond)
#   stash_keys      puts the stored keys aside (and forgets them); restore_keys brings them back:
#                   the same device acts as an impostor, then as itself again
#   keys            ack {"peers": [address, ...]} with stored keys
#   privacy         peripheral role: advertises from a new resolvable private address made from
#                   the device's IRK (the one it distributes when bonding; "irk": hex gives it
#                   one of its own first, the rig's devices otherwise share one); ack {"address": A,
#                   "identity": static address, "irk": hex}. Done by hand: Bumble 0.0.236's
#                   Device.update_rpa refuses while advertising and then sets the controller's
#                   old address, and `le_privacy_enabled` only acts at power-on.
# Events:
#   {"event":"pairing_display","passkey":N}, {"event":"pairing_compare","number":N},
#   {"event":"pairing_done","ok":true,"keys":[...],"device":ADDR}, {"event":"pairing_done","ok":false,"reason":N,"device":ADDR},
#   {"event":"encryption","encrypted":true,"key_size":16}, {"event":"encryption_failure","error":N}

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

import copy

from bumble import gatt, hci, smp
from bumble.keys import MemoryKeyStore
from bumble.pairing import PairingConfig, PairingDelegate
from bumble.smp import OobContext, OobLegacyContext, OobSharedData

import peer

logger = logging.getLogger('pairing')
CommandError = getattr(sys.modules['__main__'], 'CommandError', peer.CommandError)
emit = getattr(sys.modules['__main__'], 'emit', peer.emit)

SERVICE = '6E400301-B5A3-F393-E0A9-E50E24DCCA9E'
ENCRYPTED = '6E400302-B5A3-F393-E0A9-E50E24DCCA9E'
AUTHENTICATED = '6E400303-B5A3-F393-E0A9-E50E24DCCA9E'

IO = {
    'none': PairingDelegate.IoCapability.NO_OUTPUT_NO_INPUT,
    'display': PairingDelegate.IoCapability.DISPLAY_OUTPUT_ONLY,
    'keyboard': PairingDelegate.IoCapability.KEYBOARD_INPUT_ONLY,
    'yesno': PairingDelegate.IoCapability.DISPLAY_OUTPUT_AND_YES_NO_INPUT,
    'keyboard_display': PairingDelegate.IoCapability.DISPLAY_OUTPUT_AND_KEYBOARD_INPUT,
}
KEYS = PairingDelegate.KeyDistribution
ALL_KEYS = KEYS.DISTRIBUTE_ENCRYPTION_KEY | KEYS.DISTRIBUTE_IDENTITY_KEY | KEYS.DISTRIBUTE_SIGNING_KEY


class Settings:
    def __init__(self) -> None:
        self.io = 'none'
        self.sc = True
        self.mitm = False
        self.bonding = True
        self.passkey: int | None = None
        self.typed: int | None = None
        self.confirm = True
        self.accept = True
        self.key_size = 16
        # The identity address to distribute instead of the device's own (an impostor).
        self.identity: str | None = None
        self.identity_type = 'random'
        # The passkey last displayed by this rig or reported to it.
        self.last_displayed: int | None = None
        # LE Secure Connections OOB: this side's context and the peer's data.
        self.oob_context: OobContext | None = None
        self.oob_peer: OobSharedData | None = None
        # LE legacy pairing: the Keypress flag, and an OOB TK (hex, most significant octet first).
        self.keypress = False
        self.legacy_tk: str | None = None


# The Keypress Notifications a typing Bumble sends (Core 6.0, Vol 3, Part H, 3.5.8), after
# "entry started": a user who types three digits, erases one, types four and is done.
TYPED_KEYS = ([smp.KeypressNotificationType.PASSKEY_DIGIT_ENTERED] * 3 + [smp.KeypressNotificationType.PASSKEY_DIGIT_ERASED]
              + [smp.KeypressNotificationType.PASSKEY_DIGIT_ENTERED] * 4 + [smp.KeypressNotificationType.PASSKEY_ENTRY_COMPLETED])


class Delegate(PairingDelegate):
    def __init__(self, settings: Settings) -> None:
        super().__init__(io_capability=IO[settings.io], local_initiator_key_distribution=ALL_KEYS,
                         local_responder_key_distribution=ALL_KEYS, maximum_encryption_key_size=int(settings.key_size))
        self.settings = settings

    async def accept(self) -> bool:
        return self.settings.accept

    async def confirm(self, auto: bool = False) -> bool:
        return self.settings.accept

    async def compare_numbers(self, number: int, digits: int) -> bool:
        emit('pairing_compare', number=number)
        return self.settings.confirm

    async def get_number(self) -> int | None:
        # The test may tell the passkey to type only once the other side displayed it.
        for _ in range(1500):
            typed = self.settings.typed if self.settings.typed is not None else self.settings.last_displayed
            if typed is not None:
                emit('pairing_typed', passkey=typed)
                return typed
            await asyncio.sleep(0.01)
        return None

    async def generate_passkey(self) -> int:
        if self.settings.passkey is not None:
            return self.settings.passkey
        return await super().generate_passkey()

    async def display_number(self, number: int, digits: int) -> None:
        self.settings.last_displayed = number
        emit('pairing_display', passkey=number)


# Each device's own settings, where a command named it; else the shared ones.
OVERRIDES: dict[int, Settings] = {}
SHARED: list[Settings] = []


def settings_of(device) -> Settings:
    return OVERRIDES.get(id(device), SHARED[0])


def claim_identity() -> None:
    '''Makes Bumble's Identity Address Information carry a claimed identity where one is set.'''
    original = smp.Session.send_identity_address_command

    def send_identity_address_command(session) -> None:
        settings = settings_of(session.manager.device)
        if settings.identity is None:
            return original(session)
        kind = hci.Address.PUBLIC_DEVICE_ADDRESS if settings.identity_type == 'public' else hci.Address.RANDOM_DEVICE_ADDRESS
        claimed = hci.Address(settings.identity, kind)
        logger.info('distributing the claimed identity %s', claimed)
        session.send_command(smp.SMP_Identity_Address_Information_Command(addr_type=claimed.address_type, bd_addr=claimed))

    smp.Session.send_identity_address_command = send_identity_address_command


def keypress_notifications() -> None:
    '''Bumble 0.0.236 never sets the Keypress flag nor sends Keypress Notifications (and logs the
    peer's as not handled): where a device's settings ask, its sessions set the flag, and its user
    "types" with notifications before the passkey goes on.'''
    original_init = smp.Session.__init__
    original_prompt = smp.Session.prompt_user_for_number

    def init(session, manager, *args, **kwargs) -> None:
        original_init(session, manager, *args, **kwargs)
        if settings_of(manager.device).keypress:
            session.keypress = True

    def prompt_user_for_number(session, next_steps) -> None:
        if not settings_of(session.manager.device).keypress:
            return original_prompt(session, next_steps)
        kinds = [smp.KeypressNotificationType.PASSKEY_ENTRY_STARTED] + TYPED_KEYS

        def typed(passkey: int) -> None:
            for kind in kinds[1:]:
                session.send_command(smp.SMP_Pairing_Keypress_Notification_Command(notification_type=kind))
            emit('keypresses_sent', types=[int(kind) for kind in kinds])
            next_steps(passkey)

        session.send_command(smp.SMP_Pairing_Keypress_Notification_Command(notification_type=kinds[0]))
        return original_prompt(session, typed)

    smp.Session.__init__ = init
    smp.Session.prompt_user_for_number = prompt_user_for_number


def install(role, rig) -> None:
    settings = Settings()
    SHARED.append(settings)
    claim_identity()
    keypress_notifications()
    devices = [p.device for p in getattr(role, 'peripherals', [])]
    if hasattr(role, 'device'):
        devices.append(role.device)
    central_role = not hasattr(role, 'peripherals')
    stashed: dict[int, MemoryKeyStore] = {}

    def pairing_config(device) -> PairingConfig:
        own = settings_of(device)
        # Bumble keeps the TK least significant octet first.
        legacy = OobLegacyContext(tk=bytes.fromhex(own.legacy_tk)[::-1]) if own.legacy_tk is not None else None
        return PairingConfig(
            sc=own.sc, mitm=own.mitm, bonding=own.bonding, delegate=Delegate(own),
            oob=PairingConfig.OobConfig(our_context=own.oob_context, peer_data=own.oob_peer, legacy_context=legacy)
            if own.oob_context is not None or legacy is not None else None)

    for device in devices:
        device.keystore = MemoryKeyStore()
        device.pairing_config_factory = lambda _connection, device=device: pairing_config(device)
        device.on('connection', lambda connection, device=device: watch(connection, device, central_role, rig))
    for peripheral in getattr(role, 'peripherals', []):
        peripheral.device.add_services([gatt.Service(SERVICE, [
            gatt.Characteristic(ENCRYPTED, gatt.Characteristic.Properties.READ,
                                gatt.Characteristic.READ_REQUIRES_ENCRYPTION, b'secret'),
            gatt.Characteristic(AUTHENTICATED, gatt.Characteristic.Properties.READ,
                                gatt.Characteristic.READ_REQUIRES_AUTHENTICATION, b'top secret'),
        ])])

    def connection_of(command: dict[str, Any]):
        if hasattr(role, 'only_connection'):
            return role.only_connection(command)
        if role.connection is None:
            raise CommandError('not connected')
        return role.connection

    async def cmd_pairing_config(command: dict[str, Any]):
        known = {'cmd', 'id', 'io', 'sc', 'mitm', 'bonding', 'passkey', 'typed', 'confirm', 'accept', 'key_size', 'identity',
                 'identity_type', 'peripheral', 'irk', 'keypress', 'legacy_tk'}
        unknown = set(command) - known
        if unknown:
            raise CommandError(f'unknown pairing_config keys {sorted(unknown)}')
        if 'io' in command and command['io'] not in IO:
            raise CommandError(f'io must be one of {sorted(IO)}')
        if 'key_size' in command and not 7 <= int(command['key_size']) <= 16:
            raise CommandError('key_size must be 7..16')
        if command.get('legacy_tk') is not None and len(bytes.fromhex(command['legacy_tk'])) != 16:
            raise CommandError('legacy_tk must be 16 octets of hex')
        if command.get('identity_type', 'random') not in ('random', 'public'):
            raise CommandError('identity_type must be random or public')
        if 'irk' in command:
            # The IRK this device distributes (hex as sent; Bumble's default is all zeros, which
            # is no IRK to a resolving list nor to Bluejay's host).
            if not hasattr(role, 'target'):
                raise CommandError('irk is for the peripheral role')
            role.target(command).device.irk = bytes.fromhex(command['irk'])
        target = settings
        if 'peripheral' in command:
            if not hasattr(role, 'target'):
                raise CommandError('"peripheral" is for the peripheral role')
            device = role.target(command).device
            target = OVERRIDES.setdefault(id(device), copy.copy(settings))
        for key in known - {'cmd', 'id', 'peripheral', 'irk'}:
            if key in command:
                setattr(target, key, command[key])
        return {}

    async def cmd_initiate(command: dict[str, Any]):
        connection = connection_of(command)
        timeout = float(command.get('timeout', 20))
        if command.get('wait', True) is False:
            # Answer now; the outcome comes as a pairing_done event (the rig runs one command
            # at a time, and the test may have to tell this side a passkey meanwhile).
            rig.spawn(connection.pair())
            return {}
        try:
            if hasattr(role, 'peripherals'):
                # A peripheral asks with a Security Request; the central runs the pairing.
                done = asyncio.get_running_loop().create_future()
                connection.once('pairing', lambda _keys: done.done() or done.set_result(True))
                connection.once('pairing_failure', lambda reason: done.done() or done.set_exception(
                    RuntimeError(f'pairing failed: reason {int(reason)}')))
                connection.request_pairing()
                await asyncio.wait_for(done, timeout=timeout)
            else:
                await asyncio.wait_for(connection.pair(), timeout=timeout)
        except Exception as error:
            return {'paired': False, 'error': f'{type(error).__name__}: {error}'}
        return {'paired': True}

    async def cmd_encrypt(command: dict[str, Any]):
        connection = connection_of(command)
        try:
            await asyncio.wait_for(connection.encrypt(), timeout=float(command.get('timeout', 10)))
        except Exception as error:
            return {'encrypted': False, 'error': f'{type(error).__name__}: {error}'}
        return {'encrypted': True}

    async def cmd_forget_keys(_command: dict[str, Any]):
        for device in devices:
            device.keystore = MemoryKeyStore()
        return {}

    async def cmd_stash_keys(_command: dict[str, Any]):
        for device in devices:
            stashed[id(device)] = device.keystore
            device.keystore = MemoryKeyStore()
        return {}

    async def cmd_restore_keys(_command: dict[str, Any]):
        for device in devices:
            if id(device) in stashed:
                device.keystore = stashed.pop(id(device))
        return {}

    async def cmd_keys(_command: dict[str, Any]):
        peers: list[str] = []
        for device in devices:
            peers += [name for name, _keys in await device.keystore.get_all()]
        return {'peers': peers}

    async def cmd_oob(command: dict[str, Any]):
        # r and c travel as hex, most significant octet first (Bumble keeps them reversed).
        settings.oob_context = OobContext()
        if 'peer_r' in command:
            settings.oob_peer = OobSharedData(c=bytes.fromhex(command['peer_c'])[::-1], r=bytes.fromhex(command['peer_r'])[::-1])
        shared = settings.oob_context.share()
        return {'r': shared.r[::-1].hex(), 'c': shared.c[::-1].hex()}

    async def cmd_privacy(command: dict[str, Any]):
        if not hasattr(role, 'target'):
            raise CommandError('privacy is for the peripheral role')
        device = role.target(command).device
        # Right after a disconnection the advertising restarts by itself (auto_restart): let the
        # link go and the restart finish first, or it would come back with the old address.
        for _ in range(300):
            if not device.connections and device.is_advertising:
                break
            await asyncio.sleep(0.01)
        # The random address cannot change while advertising (Core 6.0, Vol 4, Part E, 7.8.4).
        if device.is_advertising:
            await device.stop_advertising()
        if 'irk' in command:
            # An IRK of its own (the rig's devices derive theirs from one default address, so
            # they would resolve each other's private addresses).
            device.irk = bytes.fromhex(command['irk'])
        address = hci.Address.generate_private_address(device.irk)
        await device.send_sync_command(hci.HCI_LE_Set_Random_Address_Command(random_address=address))
        device.random_address = address
        if not device.is_advertising:
            await role.target(command).start_advertising()
        return {'address': peer.address_text(address), 'identity': peer.address_text(device.static_address),
                'irk': device.irk.hex()}

    role.handlers.update({'oob': cmd_oob, 'pairing_config': cmd_pairing_config, 'initiate': cmd_initiate, 'encrypt': cmd_encrypt,
                          'forget_keys': cmd_forget_keys, 'keys': cmd_keys, 'privacy': cmd_privacy,
                          'stash_keys': cmd_stash_keys, 'restore_keys': cmd_restore_keys})


def watch(connection, device, central_role: bool, rig) -> None:
    if central_role:
        # Bumble leaves a Security Request to the application: encrypt with stored keys, else pair.
        async def answer_security_request() -> None:
            try:
                if await device.keystore.get(str(connection.peer_address)):
                    await connection.encrypt()
                else:
                    await connection.pair()
            except Exception as error:
                logger.info('answering the security request failed: %s', error)

        connection.on('security_request', lambda _auth_req: rig.spawn(answer_security_request()))

    def on_pairing(keys) -> None:
        names = [name for name in ('ltk', 'ltk_central', 'ltk_peripheral', 'irk', 'csrk') if getattr(keys, name, None)]
        emit('pairing_done', ok=True, keys=names, device=device.random_address.to_string(with_type_qualifier=False))

    def on_failure(reason) -> None:
        emit('pairing_done', ok=False, reason=int(reason), device=device.random_address.to_string(with_type_qualifier=False))

    def on_encryption() -> None:
        emit('encryption', encrypted=bool(connection.is_encrypted), key_size=int(getattr(connection, "encryption_key_size", 0) or 0))

    def on_encryption_failure(error) -> None:
        emit('encryption_failure', error=int(getattr(error, 'error_code', 0) or 0))

    connection.on('pairing', on_pairing)
    connection.on('pairing_failure', on_failure)
    connection.on('connection_encryption_change', on_encryption)
    connection.on('connection_encryption_failure', on_encryption_failure)
