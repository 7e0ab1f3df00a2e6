#!/usr/bin/env python3
# The Bumble peer of Bluejay's interop tests.
#
# One process, one Bumble LocalLink, several virtual controllers on it:
#
#   controller A  <- H4 over TCP (127.0.0.1, a port chosen by the OS) <- Bluejay's host
#   controller B1 .. BN <- in-process Bumble Devices acting per --role
#
# With --controller rootcanal --hci-port P the devices are on Google's Rootcanal instead, each
# on a controller of its own, and Bluejay's host takes one more at P (rootcanal_radio.py).
#
# The control protocol (one JSON object per line on stdin and stdout, logs on stderr only)
# is described in README.md beside this file. In short:
#   stdout, first: {"event":"ready","port":N,"peer_address":"F0:00:00:00:00:01",
#                   "peer_address_type":"random",...} once everything is up.
#   stdin: {"cmd":"notify","uuid":"2A37","count":10,"id":7}
#   stdout: {"event":"ack","cmd":"notify","id":7,...} or {"event":"error","cmd":...,"message":...}
#
# Differences from a stock `bumble.controller.Controller` (see README.md, "Rig facts"):
# - Controller A is replaced by a fresh one whenever a host connects, disconnects or sends
#   HCI Reset: links left up by a previous host are terminated (the peers see reason 0x08,
#   Connection Timeout), so a host never inherits stale state.
# - Active scanning returns the advertiser's real scan response data; passive scanning
#   returns none (stock Bumble echoes the advertising data as a scan response).
# - Controller A does not claim LE Extended Advertising, so a host that scans with the
#   legacy commands gets legacy LE Advertising Reports (0x3E/0x02).
# - ACL data from a host that connects with its public address reaches the peer (stock
#   Bumble always sends link data from the random address).

from __future__ import annotations

import argparse
import asyncio
import contextvars
import importlib
import json
import logging
import os
import random
import signal
import struct
import sys
import termios
import tty
from typing import Any, Callable

from bumble import att, gatt, gatt_server, hci, ll
from bumble.controller import Controller, LegacyAdvertiser
from bumble.core import UUID, PhysicalTransport
from bumble.device import Connection, Device
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport.common import AsyncPipeSink, PacketParser

import rootcanal_radio

logger = logging.getLogger('peer')

# Core 6.0, Vol 3, Part F, 3.2.9 limits attribute values to 512 octets. The rig's long
# characteristic holds 600 so that the client's long read and long write go past that;
# Bumble's server checks this module-level limit at run time.
LONG_VALUE_SIZE = 600
gatt_server.GATT_MAX_ATTRIBUTE_VALUE_SIZE = LONG_VALUE_SIZE

HOST_PUBLIC_ADDRESS = 'F0:F1:F2:F3:F4:01'
PERIPHERAL_ADDRESS_FORMAT = 'F0:00:00:00:00:{:02X}'
CENTRAL_ADDRESS = 'F0:00:00:00:00:C1'
HCI_RESET_PACKET = bytes([0x01, 0x03, 0x0C, 0x00])
# The static random address controller A reports through Zephyr's Read Static Addresses
# (--controller-variant zephyr-static-address): the two top bits 11, as Core 6.0, Vol 6,
# Part B, 1.3.2.1 wants.
ZEPHYR_STATIC_ADDRESS = 'C4:5A:7E:11:22:33'
CONNECTION_TIMEOUT_ERROR = 0x08
REMOTE_USER_TERMINATED = 0x13

# UUIDs of the rig's database.
HEART_RATE_SERVICE = '180D'
HEART_RATE_MEASUREMENT = '2A37'
BODY_SENSOR_LOCATION = '2A38'
DEVICE_INFORMATION_SERVICE = '180A'
MANUFACTURER_NAME = '2A29'
MODEL_NUMBER = '2A24'
SERIAL_NUMBER = '2A25'
FIRMWARE_REVISION = '2A26'
BATTERY_SERVICE = '180F'
BATTERY_LEVEL = '2A19'
SERVICE_CHANGED = '2A05'
CUSTOM_SERVICE = '6E400001-B5A3-F393-E0A9-E50E24DCCA9E'
UART_RX = '6E400002-B5A3-F393-E0A9-E50E24DCCA9E'  # the central writes here
UART_TX = '6E400003-B5A3-F393-E0A9-E50E24DCCA9E'  # the peripheral answers here (notify)
LONG_VALUE = '6E400004-B5A3-F393-E0A9-E50E24DCCA9E'
INDICATING = '6E400005-B5A3-F393-E0A9-E50E24DCCA9E'
READ_REFUSED = '6E400006-B5A3-F393-E0A9-E50E24DCCA9E'
WRITE_SINK = '6E400007-B5A3-F393-E0A9-E50E24DCCA9E'
DYNAMIC_SERVICE = '6E400101-B5A3-F393-E0A9-E50E24DCCA9E'
DYNAMIC_VALUE = '6E400102-B5A3-F393-E0A9-E50E24DCCA9E'

# A UART write of exactly these 3 bytes, A5 then a UInt16 LE length N, asks for an answer of
# N bytes (byte i is i % 256); any other write is answered with the written bytes.
UART_LONG_ANSWER_MARKER = 0xA5

Props = gatt.Characteristic.Properties
Perms = gatt.Characteristic.Permissions

# The ATT opcode of the request being served: tells a write request from a write command.
current_att_opcode: contextvars.ContextVar[int] = contextvars.ContextVar('att_opcode', default=0)


# -----------------------------------------------------------------------------
# Output
# -----------------------------------------------------------------------------
def emit(event: str, **fields: Any) -> None:
    '''Writes one event line on stdout.'''
    line = json.dumps({'event': event, **fields}, separators=(',', ':'))
    sys.stdout.write(line + '\n')
    sys.stdout.flush()


def address_text(address: hci.Address) -> str:
    return address.to_string(with_type_qualifier=False)


def address_type_text(address: hci.Address) -> str:
    return 'public' if address.is_public else 'random'


def uuid_text(uuid: UUID) -> str:
    '''"180D" for a 16-bit UUID, "6E400001-B5A3-F393-E0A9-E50E24DCCA9E" for a 128-bit one.'''
    raw = bytes(reversed(uuid.uuid_bytes))
    if len(raw) == 2:
        return raw.hex().upper()
    if len(raw) == 4:
        raw = raw + bytes.fromhex('00001000800000805F9B34FB')
    text = raw.hex().upper()
    return f'{text[0:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:32]}'


def normalize_uuid(text: str) -> str:
    '''Accepts "2a37", "0x2A37", "00002A37-0000-1000-8000-00805F9B34FB" or a 128-bit UUID.'''
    text = text.strip().upper()
    if text.startswith('0X'):
        text = text[2:]
    if len(text) == 36 and text.endswith('-0000-1000-8000-00805F9B34FB') and text.startswith('0000'):
        return text[4:8]
    return text


# -----------------------------------------------------------------------------
# The link and the controllers
# -----------------------------------------------------------------------------
class RigLink(LocalLink):
    '''A LocalLink that sends link data from the address the link was made with, and tells
    scanners how the advertiser advertises (scan response data, connectable or not).'''

    def attach_device(self, name: str) -> tuple[RigController, Host]:
        '''A controller on this link for a Bumble device, and the host that drives it.
        (`rootcanal_radio.RootcanalRadio` has the same method for devices on Rootcanal.)'''
        controller = RigController(name, link=self)
        return controller, Host(controller, AsyncPipeSink(controller))

    async def connect(self) -> None:
        '''The devices' controllers are on the link from the start.'''

    async def close(self) -> None:
        pass

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport != PhysicalTransport.LE:
            return super().send_acl_data(sender_controller, destination_address, transport, data)
        connection = sender_controller.le_connections.get(destination_address)
        source_address = connection.self_address if connection else sender_controller.random_address
        destination = self.find_le_controller(destination_address)
        if destination is not None:
            asyncio.get_running_loop().call_soon(
                destination.on_link_acl_data, source_address, transport, data
            )

    def send_advertising_pdu(self, sender_controller, packet):
        meta = advertising_meta(sender_controller, packet)
        loop = asyncio.get_running_loop()
        for controller in list(self.controllers):
            if controller is sender_controller:
                continue
            if isinstance(controller, RigController):
                loop.call_soon(controller.on_rig_advertising_pdu, packet, meta)
            else:
                loop.call_soon(controller.on_ll_advertising_pdu, packet)


def advertising_meta(controller: Controller, packet: ll.AdvertisingPdu) -> dict[str, Any]:
    '''How the sender advertises: connectable, scannable, directed, and its scan response.'''
    meta = {'connectable': True, 'scannable': True, 'directed': False, 'legacy': True, 'scan_response': b''}
    address = getattr(packet, 'advertiser_address', None)
    if address is None or isinstance(packet, ll.ConnectInd):
        return meta
    legacy = controller.le_legacy_advertiser
    if legacy.enabled and legacy.address == address:
        kind = legacy.advertising_type
        meta.update(
            connectable=kind in (0, 1, 4),
            scannable=kind in (0, 2),
            directed=kind in (1, 4),
            scan_response=bytes(legacy.scan_response_data or b''),
        )
        return meta
    for advertising_set in controller.advertising_sets.values():
        if advertising_set.enabled and advertising_set.address == address and advertising_set.parameters:
            properties = int(advertising_set.parameters.advertising_event_properties)
            meta.update(
                connectable=bool(properties & 0x01),
                scannable=bool(properties & 0x02),
                directed=bool(properties & 0x04),
                legacy=bool(properties & 0x10),
                scan_response=bytes(advertising_set.scan_response_data),
            )
            return meta
    return meta


class RigLegacyAdvertiser(LegacyAdvertiser):
    '''Advertises with every undirected legacy type (stock Bumble sends ADV_IND only) at the
    interval the host asked for (stock Bumble reads 0.625 ms units as milliseconds).'''

    def _on_timer_fired(self) -> None:
        self.send_advertising_data()
        interval = max(self.advertising_interval_min * 0.625 / 1000.0, 0.02)
        self.timer_handle = asyncio.get_running_loop().call_later(interval, self._on_timer_fired)

    def send_advertising_data(self) -> None:
        if not self.enabled:
            return
        self.controller.send_advertising_pdu(ll.AdvInd(advertiser_address=self.address, data=self.advertising_data))


# Variants of controller A (--controller-variant NAME, repeatable), each standing for a class of
# real controllers; README.md, "Controller variants", says what each changes.
CONTROLLER_VARIANTS = {
    'no-public-address': 'Read BD_ADDR answers 00:00:00:00:00:00 (Zephyr hci_uart on an nRF52840; Bumble given no address)',
    'zephyr-static-address': 'no public address, but Zephyr\'s vendor commands 0xFC01, 0xFC02 and 0xFC09 report a static random address',
    'shared-buffers': 'LE Read Buffer Size (v1 and v2) reports no LE buffers: LE data shares the ACL buffers of Read Buffer Size',
    'no-buffer-size-v2': 'no LE Read Buffer Size v2 (a Bluetooth 5.0 or 5.1 controller)',
    'bluetooth-4.2': 'a Bluetooth 4.2 controller: no extended advertising, scanning or connecting, no 2M or Coded PHY, no PHY commands',
    'tiny-lists': 'a filter accept list and a resolving list of one entry each',
    'unknown-optional-commands': 'lists LE Set Data Length, LE Read PHY and LE Set Default PHY but answers them Unknown HCI Command',
}

# What a shared-buffers controller reports in Read Buffer Size: its BR/EDR ACL buffers.
SHARED_ACL_DATA_LENGTH = 100
SHARED_ACL_BUFFERS = 10

# Commands a Bluetooth 4.2 controller does not know (Core 5.0 and later).
BLUETOOTH_5_COMMANDS = {
    hci.HCI_LE_READ_PHY_COMMAND,
    hci.HCI_LE_SET_DEFAULT_PHY_COMMAND,
    hci.HCI_LE_SET_PHY_COMMAND,
    hci.HCI_LE_RECEIVER_TEST_V2_COMMAND,
    hci.HCI_LE_TRANSMITTER_TEST_V2_COMMAND,
    hci.HCI_LE_READ_TRANSMIT_POWER_COMMAND,
    hci.HCI_LE_SET_PRIVACY_MODE_COMMAND,
    hci.HCI_LE_READ_BUFFER_SIZE_V2_COMMAND,
    hci.HCI_LE_SET_ADVERTISING_SET_RANDOM_ADDRESS_COMMAND,
    hci.HCI_LE_SET_EXTENDED_ADVERTISING_PARAMETERS_COMMAND,
    hci.HCI_LE_SET_EXTENDED_ADVERTISING_DATA_COMMAND,
    hci.HCI_LE_SET_EXTENDED_SCAN_RESPONSE_DATA_COMMAND,
    hci.HCI_LE_SET_EXTENDED_ADVERTISING_ENABLE_COMMAND,
    hci.HCI_LE_READ_MAXIMUM_ADVERTISING_DATA_LENGTH_COMMAND,
    hci.HCI_LE_READ_NUMBER_OF_SUPPORTED_ADVERTISING_SETS_COMMAND,
    hci.HCI_LE_REMOVE_ADVERTISING_SET_COMMAND,
    hci.HCI_LE_CLEAR_ADVERTISING_SETS_COMMAND,
    hci.HCI_LE_SET_EXTENDED_SCAN_PARAMETERS_COMMAND,
    hci.HCI_LE_SET_EXTENDED_SCAN_ENABLE_COMMAND,
    hci.HCI_LE_EXTENDED_CREATE_CONNECTION_COMMAND,
}

# The legacy and the extended advertising, scanning and initiating commands: a host that used
# one family since the last reset gets Command Disallowed for the other (Core 6.0, Vol 4,
# Part E, 3.1.1). Stock Bumble takes both; controller A refuses the mix, as a real one does.
LEGACY_FAMILY = {
    hci.HCI_LE_SET_ADVERTISING_PARAMETERS_COMMAND, hci.HCI_LE_READ_ADVERTISING_PHYSICAL_CHANNEL_TX_POWER_COMMAND,
    hci.HCI_LE_SET_ADVERTISING_DATA_COMMAND, hci.HCI_LE_SET_SCAN_RESPONSE_DATA_COMMAND,
    hci.HCI_LE_SET_ADVERTISING_ENABLE_COMMAND, hci.HCI_LE_SET_SCAN_PARAMETERS_COMMAND,
    hci.HCI_LE_SET_SCAN_ENABLE_COMMAND, hci.HCI_LE_CREATE_CONNECTION_COMMAND,
}
EXTENDED_FAMILY = {
    hci.HCI_LE_SET_ADVERTISING_SET_RANDOM_ADDRESS_COMMAND, hci.HCI_LE_SET_EXTENDED_ADVERTISING_PARAMETERS_COMMAND,
    hci.HCI_LE_SET_EXTENDED_ADVERTISING_DATA_COMMAND, hci.HCI_LE_SET_EXTENDED_SCAN_RESPONSE_DATA_COMMAND,
    hci.HCI_LE_SET_EXTENDED_ADVERTISING_ENABLE_COMMAND, hci.HCI_LE_READ_MAXIMUM_ADVERTISING_DATA_LENGTH_COMMAND,
    hci.HCI_LE_READ_NUMBER_OF_SUPPORTED_ADVERTISING_SETS_COMMAND, hci.HCI_LE_REMOVE_ADVERTISING_SET_COMMAND,
    hci.HCI_LE_CLEAR_ADVERTISING_SETS_COMMAND, hci.HCI_LE_SET_EXTENDED_SCAN_PARAMETERS_COMMAND,
    hci.HCI_LE_SET_EXTENDED_SCAN_ENABLE_COMMAND, hci.HCI_LE_EXTENDED_CREATE_CONNECTION_COMMAND,
    hci.HCI_LE_SET_PERIODIC_ADVERTISING_PARAMETERS_COMMAND, hci.HCI_LE_SET_PERIODIC_ADVERTISING_DATA_COMMAND,
    hci.HCI_LE_SET_PERIODIC_ADVERTISING_ENABLE_COMMAND, hci.HCI_LE_PERIODIC_ADVERTISING_CREATE_SYNC_COMMAND,
    hci.HCI_LE_PERIODIC_ADVERTISING_CREATE_SYNC_CANCEL_COMMAND, hci.HCI_LE_PERIODIC_ADVERTISING_TERMINATE_SYNC_COMMAND,
}

# Zephyr's vendor HCI commands (include/zephyr/bluetooth/hci_vs.h): OGF 0x3F.
ZEPHYR_READ_VERSION_INFORMATION = 0xFC01
ZEPHYR_READ_SUPPORTED_COMMANDS = 0xFC02
ZEPHYR_READ_STATIC_ADDRESSES = 0xFC09


class RigController(Controller):
    '''A Bumble virtual controller with the rig's fixes (see the top of this file).'''

    def __init__(self, name: str, link: LocalLink, public_address: str | None = None, extended: bool = True,
                 served: bool = False, variants: list[str] | tuple[str, ...] = ()):
        super().__init__(name, link=link, public_address=public_address)
        self.le_legacy_advertiser = RigLegacyAdvertiser(self)
        self.rig_scan_extended = False
        self.rig_extended_scan_active = True
        self.retired = False
        # Commands answered Unknown HCI Command whatever Bumble would do (the variants).
        self.rig_unknown_opcodes: set[int] = set()
        self.rig_zephyr = False
        self.rig_list_limit: int | None = None
        self.rig_list_entries: dict[str, set[bytes]] = {'accept': set(), 'resolving': set()}
        # Controller A: the command family its host chose ('legacy' or 'extended'), once it chose.
        self.rig_refuses_family_mix = served
        self.rig_family: str | None = None
        # Stock Bumble claims LL Privacy but keeps its resolving list without resolving anything
        # (no address is resolved in reports, connections or LE Create Connection): a host that
        # believed it would lose its bonded peers. The rig's controllers leave the bit out, as a
        # controller that does not resolve must; Rootcanal is the one that resolves.
        self.le_features = self.le_features & ~hci.LeFeatureMask.LL_PRIVACY
        if not extended:
            # Legacy scanning must get legacy reports (Core 6.0, Vol 4, Part E, 3.1.1).
            self.le_features = self.le_features & ~(
                hci.LeFeatureMask.LE_EXTENDED_ADVERTISING | hci.LeFeatureMask.LE_PERIODIC_ADVERTISING
            )
        elif served:
            # Controller A with --extended-controller. Stock Bumble handles the extended
            # advertising, scanning and connecting commands but leaves them out of Read Local
            # Supported Commands, so a host that checks the bitmap (Core 6.0, Vol 4, Part E,
            # 7.4.2) would not use them: list them. A host that uses the extended commands must
            # also connect with them (Vol 4, Part E, 3.1.1), so LE Extended Create Connection too.
            self.supported_commands = set(self.supported_commands) | {
                hci.HCI_LE_SET_ADVERTISING_SET_RANDOM_ADDRESS_COMMAND,
                hci.HCI_LE_SET_EXTENDED_ADVERTISING_PARAMETERS_COMMAND,
                hci.HCI_LE_SET_EXTENDED_ADVERTISING_DATA_COMMAND,
                hci.HCI_LE_SET_EXTENDED_SCAN_RESPONSE_DATA_COMMAND,
                hci.HCI_LE_SET_EXTENDED_ADVERTISING_ENABLE_COMMAND,
                hci.HCI_LE_READ_MAXIMUM_ADVERTISING_DATA_LENGTH_COMMAND,
                hci.HCI_LE_READ_NUMBER_OF_SUPPORTED_ADVERTISING_SETS_COMMAND,
                hci.HCI_LE_REMOVE_ADVERTISING_SET_COMMAND,
                hci.HCI_LE_CLEAR_ADVERTISING_SETS_COMMAND,
                hci.HCI_LE_SET_EXTENDED_SCAN_PARAMETERS_COMMAND,
                hci.HCI_LE_SET_EXTENDED_SCAN_ENABLE_COMMAND,
                hci.HCI_LE_EXTENDED_CREATE_CONNECTION_COMMAND,
            }
        for variant in variants:
            self.rig_apply_variant(variant)

    # Controller variants -------------------------------------------------------
    def rig_apply_variant(self, variant: str) -> None:
        if variant in ('no-public-address', 'zephyr-static-address'):
            # As stock Bumble given no address: Read BD_ADDR answers 00:00:00:00:00:00 (and
            # Bumble tags that "public" address as a random one on the link).
            self.public_address = hci.Address('00:00:00:00:00:00')
            self.rig_zephyr = variant == 'zephyr-static-address'
        elif variant == 'shared-buffers':
            # Core 6.0, Vol 4, Part E, 7.8.2: zero LE buffers mean LE shares the ACL buffers.
            self.le_acl_data_packet_length = 0
            self.total_num_le_acl_data_packets = 0
            self.acl_data_packet_length = SHARED_ACL_DATA_LENGTH
            self.total_num_acl_data_packets = SHARED_ACL_BUFFERS
        elif variant == 'no-buffer-size-v2':
            self.rig_forget_commands({hci.HCI_LE_READ_BUFFER_SIZE_V2_COMMAND})
        elif variant == 'bluetooth-4.2':
            self.hci_version = hci.HCI_VERSION_BLUETOOTH_CORE_4_2
            self.lmp_version = hci.HCI_VERSION_BLUETOOTH_CORE_4_2
            self.le_features = self.le_features & ~(
                hci.LeFeatureMask.LE_2M_PHY | hci.LeFeatureMask.LE_CODED_PHY
                | hci.LeFeatureMask.LE_EXTENDED_ADVERTISING | hci.LeFeatureMask.LE_PERIODIC_ADVERTISING
                | hci.LeFeatureMask.CHANNEL_SELECTION_ALGORITHM_2
                | hci.LeFeatureMask.MINIMUM_NUMBER_OF_USED_CHANNELS_PROCEDURE
            )
            self.rig_forget_commands(BLUETOOTH_5_COMMANDS)
        elif variant == 'tiny-lists':
            self.filter_accept_list_size = 1
            self.resolving_list_size = 1
            self.rig_list_limit = 1
        elif variant == 'unknown-optional-commands':
            # Listed in the bitmap, refused when sent: the host must cope with the answer.
            self.rig_unknown_opcodes |= {
                hci.HCI_LE_SET_DATA_LENGTH_COMMAND, hci.HCI_LE_READ_PHY_COMMAND, hci.HCI_LE_SET_DEFAULT_PHY_COMMAND,
            }
        else:
            raise ValueError(f'unknown controller variant {variant!r}; known: {sorted(CONTROLLER_VARIANTS)}')

    def rig_forget_commands(self, opcodes: set[int]) -> None:
        '''Leaves these commands out of the bitmap and answers them Unknown HCI Command.'''
        self.supported_commands = set(self.supported_commands) - opcodes
        self.rig_unknown_opcodes |= opcodes

    def on_packet(self, packet: bytes) -> None:
        # A vendor-specific command (OGF 0x3F) means something else to each vendor, and Bumble
        # parses some of their opcodes as Intel's (its drivers register them), failing on
        # Zephyr's: they are answered here, from the raw bytes.
        if len(packet) >= 4 and packet[0] == hci.HCI_COMMAND_PACKET and int.from_bytes(packet[1:3], 'little') >> 10 == 0x3F:
            op_code = int.from_bytes(packet[1:3], 'little')
            answer = self.rig_vendor_answer(op_code)
            if answer is None:
                logger.info('controller %s: Unknown HCI Command 0x%04X (vendor-specific)', self.name, op_code)
                answer = bytes([hci.HCI_ErrorCode.UNKNOWN_HCI_COMMAND_ERROR])
            self.send_hci_packet(hci.HCI_Command_Complete_Event(
                num_hci_command_packets=1, command_opcode=op_code,
                return_parameters=hci.HCI_GenericReturnParameters(data=answer)))
            return
        super().on_packet(packet)

    def on_hci_command_packet(self, command: hci.HCI_Command) -> None:
        op_code = command.op_code
        family = 'legacy' if op_code in LEGACY_FAMILY else 'extended' if op_code in EXTENDED_FAMILY else None
        if self.rig_refuses_family_mix and family is not None and op_code not in self.rig_unknown_opcodes:
            if self.rig_family is not None and family != self.rig_family:
                logger.warning('controller %s: %s refused: the host used the %s commands since the reset',
                               self.name, hci.HCI_Command.command_name(op_code), self.rig_family)
                status = hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR
                if isinstance(command, hci.HCI_AsyncCommand):
                    self._send_hci_command_status(status, op_code)
                else:
                    self.send_hci_packet(hci.HCI_Command_Complete_Event(
                        num_hci_command_packets=1, command_opcode=op_code, return_parameters=hci.HCI_StatusReturnParameters(status)))
                return
            self.rig_family = family
        # Stock Bumble answers a command it has no class for with nothing at all; a controller
        # answers Unknown HCI Command (Core 6.0, Vol 4, Part E, 4.5), as it does the variants'.
        if op_code in self.rig_unknown_opcodes or type(command) is hci.HCI_Command:
            logger.info('controller %s: Unknown HCI Command %s', self.name, hci.HCI_Command.command_name(op_code))
            if isinstance(command, hci.HCI_AsyncCommand):
                self._send_hci_command_status(hci.HCI_ErrorCode.UNKNOWN_HCI_COMMAND_ERROR, op_code)
            else:
                self.send_hci_packet(hci.HCI_Command_Complete_Event(
                    num_hci_command_packets=1, command_opcode=op_code,
                    return_parameters=hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.UNKNOWN_HCI_COMMAND_ERROR)))
            return
        super().on_hci_command_packet(command)

    def rig_vendor_answer(self, op_code: int) -> bytes | None:
        '''Zephyr's vendor commands (include/zephyr/bluetooth/hci_vs.h), for the
        zephyr-static-address variant: return parameters, Status first.'''
        if not self.rig_zephyr:
            return None
        if op_code == ZEPHYR_READ_VERSION_INFORMATION:
            # hw_platform 0x0002 (Nordic), hw_variant 0x0002 (nRF52x), fw_variant 0x01
            # (standard controller), fw_version, fw_revision, fw_build.
            return struct.pack('<BHHBBHI', 0, 0x0002, 0x0002, 0x01, 3, 0, 0)
        if op_code == ZEPHYR_READ_SUPPORTED_COMMANDS:
            # Bits 0 (version), 1 (supported commands) and 8 (read static addresses).
            return bytes([0, 0b11, 0b1]) + bytes(62)
        if op_code == ZEPHYR_READ_STATIC_ADDRESSES:
            address = bytes(hci.Address(ZEPHYR_STATIC_ADDRESS))
            return bytes([0, 1]) + address + bytes([0x11] * 16)
        return None

    def rig_list_change(self, which: str, entry: bytes | None, add: bool) -> hci.HCI_StatusReturnParameters:
        entries = self.rig_list_entries[which]
        if entry is None:
            entries.clear()
        elif add:
            if self.rig_list_limit is not None and entry not in entries and len(entries) >= self.rig_list_limit:
                # Core 6.0, Vol 4, Part E, 7.8.16 and 7.8.38: a full list refuses the entry.
                return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.MEMORY_CAPACITY_EXCEEDED_ERROR)
            entries.add(entry)
        else:
            entries.discard(entry)
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    def on_hci_le_add_device_to_filter_accept_list_command(self, command):
        return self.rig_list_change('accept', bytes([int(command.address_type)]) + bytes(command.address), True)

    def on_hci_le_remove_device_from_filter_accept_list_command(self, command):
        return self.rig_list_change('accept', bytes([int(command.address_type)]) + bytes(command.address), False)

    def on_hci_le_clear_filter_accept_list_command(self, _command):
        return self.rig_list_change('accept', None, False)

    def on_hci_le_add_device_to_resolving_list_command(self, command):
        return self.rig_list_change('resolving', bytes([int(command.peer_identity_address_type)]) + bytes(command.peer_identity_address), True)

    def on_hci_le_remove_device_from_resolving_list_command(self, command):
        return self.rig_list_change('resolving', bytes([int(command.peer_identity_address_type)]) + bytes(command.peer_identity_address), False)

    def on_hci_le_clear_resolving_list_command(self, _command):
        return self.rig_list_change('resolving', None, False)

    # Which kind of report the host asked for.
    def on_hci_le_set_scan_enable_command(self, command):
        self.rig_scan_extended = False
        return super().on_hci_le_set_scan_enable_command(command)

    def on_hci_le_set_extended_scan_parameters_command(self, command):
        self.rig_extended_scan_active = any(kind == 1 for kind in command.scan_types)
        return super().on_hci_le_set_extended_scan_parameters_command(command)

    def on_hci_le_set_extended_scan_enable_command(self, command):
        self.rig_scan_extended = True
        return super().on_hci_le_set_extended_scan_enable_command(command)

    # Stock Bumble answers LE Create Connection Cancel with success but keeps the attempt
    # pending, so the next LE Create Connection is refused with Command Disallowed. Do what
    # Core 6.0, Vol 4, Part E, 7.8.13 says: Command Disallowed when nothing is pending, else
    # end the attempt with an LE Connection Complete carrying Unknown Connection Identifier.
    def on_hci_le_create_connection_cancel_command(self, _command):
        pending = self.pending_le_connection
        if pending is None:
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
        self.pending_le_connection = None
        complete = hci.HCI_LE_Connection_Complete_Event(
            status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
            connection_handle=0,
            role=hci.Role.CENTRAL,
            peer_address_type=pending.peer_address_type,
            peer_address=pending.peer_address,
            connection_interval=0,
            peripheral_latency=0,
            supervision_timeout=0,
            central_clock_accuracy=0,
        )
        # The event follows the command's Command Complete.
        asyncio.get_running_loop().call_soon(self.send_hci_packet, complete)
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    # Stock Bumble has no handler for LE Set PHY: its fallback answers an async command with
    # nothing at all, so a host waits for a Command Status that never comes, and LE Read PHY
    # always says 1M. The rig runs the PHY update procedure (Core 6.0, Vol 6, Part B,
    # 5.1.10) between its controllers, at once: Command Status, then LE PHY Update Complete
    # to the requester's host and, when the PHYs changed, to the peer's host. A peer whose
    # LE features lack both 2M and Coded does not know the procedure (Vol 6, Part B, 4.6.9):
    # the requester hears Unsupported Remote Feature (0x1A). `phy_support` (peripheral role)
    # takes 2M and Coded out of a peripheral's features.
    RIG_PHY_BITS = ((0x01, 1, 0), (0x02, 2, hci.LeFeatureMask.LE_2M_PHY), (0x04, 3, hci.LeFeatureMask.LE_CODED_PHY))

    def rig_supported_phy_bits(self) -> int:
        return sum(bit for bit, _phy, feature in self.RIG_PHY_BITS if feature == 0 or self.le_features & feature)

    def rig_phy(self, handle: int) -> tuple[int, int]:
        return getattr(self, 'rig_phys', {}).get(handle, (1, 1))

    def rig_set_phy(self, handle: int, tx: int, rx: int) -> None:
        if not hasattr(self, 'rig_phys'):
            self.rig_phys = {}
        self.rig_phys[handle] = (tx, rx)

    @staticmethod
    def rig_choose_phy(bits: int) -> int | None:
        for bit, phy in ((0x02, 2), (0x01, 1), (0x04, 3)):
            if bits & bit:
                return phy
        return None

    def on_hci_le_read_phy_command(self, command):
        tx, rx = self.rig_phy(command.connection_handle)
        status = hci.HCI_ErrorCode.SUCCESS if self.find_le_connection_by_handle(command.connection_handle) \
            else hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR
        return hci.HCI_LE_Read_PHY_ReturnParameters(status=status, connection_handle=command.connection_handle, tx_phy=tx, rx_phy=rx)

    def on_hci_le_set_phy_command(self, command):
        connection = self.find_le_connection_by_handle(command.connection_handle)
        if connection is None:
            self._send_hci_command_status(hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, command.op_code)
            return None
        own = self.rig_supported_phy_bits()
        tx_bits = 0x07 if command.all_phys & 0x01 else command.tx_phys
        rx_bits = 0x07 if command.all_phys & 0x02 else command.rx_phys
        # A PHY this controller lacks: Unsupported Feature or Parameter Value (Vol 4, Part E, 7.8.49).
        if (not command.all_phys & 0x01 and tx_bits & ~own) or (not command.all_phys & 0x02 and rx_bits & ~own):
            self._send_hci_command_status(hci.HCI_ErrorCode.UNSUPPORTED_FEATURE_OR_PARAMETER_VALUE_ERROR, command.op_code)
            return None
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        peer = self.link.find_le_controller(connection.peer_address) if self.link else None
        peer_connection = peer.le_connections.get(connection.self_address) if peer is not None else None
        tx, rx = self.rig_phy(connection.handle)
        loop = asyncio.get_running_loop()
        if peer is None or peer_connection is None or not peer.le_features & (hci.LeFeatureMask.LE_2M_PHY | hci.LeFeatureMask.LE_CODED_PHY):
            loop.call_soon(self.send_hci_packet, hci.HCI_LE_PHY_Update_Complete_Event(
                status=hci.HCI_ErrorCode.UNSUPPORTED_REMOTE_FEATURE_ERROR, connection_handle=connection.handle, tx_phy=tx, rx_phy=rx))
            return None
        common = own & peer.rig_supported_phy_bits()
        new_tx = self.rig_choose_phy(tx_bits & common) or tx
        new_rx = self.rig_choose_phy(rx_bits & common) or rx
        self.rig_set_phy(connection.handle, new_tx, new_rx)
        peer.rig_set_phy(peer_connection.handle, new_rx, new_tx)
        loop.call_soon(self.send_hci_packet, hci.HCI_LE_PHY_Update_Complete_Event(
            status=hci.HCI_ErrorCode.SUCCESS, connection_handle=connection.handle, tx_phy=new_tx, rx_phy=new_rx))
        if (new_tx, new_rx) != (tx, rx):
            loop.call_soon(peer.send_hci_packet, hci.HCI_LE_PHY_Update_Complete_Event(
                status=hci.HCI_ErrorCode.SUCCESS, connection_handle=peer_connection.handle, tx_phy=new_rx, rx_phy=new_tx))
        return None

    def on_le_connect_ind(self, packet: ll.ConnectInd) -> None:
        meta = advertising_meta(self, ll.AdvInd(advertiser_address=packet.advertiser_address, data=b''))
        if not meta['connectable']:
            return
        super().on_le_connect_ind(packet)

    def on_rig_advertising_pdu(self, packet: ll.AdvertisingPdu, meta: dict[str, Any]) -> None:
        if self.retired:
            return
        if not isinstance(packet, (ll.AdvInd, ll.AdvExtInd)):
            self.on_ll_advertising_pdu(packet)
            return
        if self.le_scan_enable:
            self.send_rig_reports(packet, meta)
        # Let the stock code create a pending connection (and periodic syncs), without its reports.
        scanning = self.le_scan_enable
        self.le_scan_enable = False
        try:
            self.on_advertising_pdu(packet)
        finally:
            self.le_scan_enable = scanning

    def send_rig_reports(self, packet, meta: dict[str, Any]) -> None:
        address = packet.advertiser_address
        active = self.rig_extended_scan_active if self.rig_scan_extended else self.le_scan_type == 1
        with_scan_response = active and meta['scannable']
        if self.rig_scan_extended:
            Report = hci.HCI_LE_Extended_Advertising_Report_Event.Report
            kind = (
                (0x01 if meta['connectable'] else 0)
                | (0x02 if meta['scannable'] else 0)
                | (0x04 if meta['directed'] else 0)
                | (0x10 if meta['legacy'] else 0)
            )
            reports = []
            for base, whole in [(kind, packet.data)] + ([(kind | 0x08, meta['scan_response'])] if with_scan_response else []):
                # One report carries at most 229 octets of data; a controller reports longer
                # data in several, each but the last "incomplete, more to come" (data status
                # 0b01 in bits 5-6; Core 6.0, Vol 4, Part E, 7.7.65.13). Stock Bumble sends
                # one report whatever the length, an event longer than HCI allows.
                chunks = [whole[i:i + 229] for i in range(0, len(whole), 229)] or [b'']
                for number, chunk in enumerate(chunks):
                    reports.append((base | (0x20 if number < len(chunks) - 1 else 0), chunk))
            for event_type, data in reports:
                report = Report(
                    event_type=event_type,
                    address_type=address.address_type,
                    address=address,
                    primary_phy=hci.Phy.LE_1M,
                    secondary_phy=0 if meta['legacy'] else hci.Phy.LE_1M,
                    advertising_sid=0xFF if meta['legacy'] else 0,
                    tx_power=0x7F,
                    rssi=-50,
                    periodic_advertising_interval=0,
                    direct_address_type=0,
                    direct_address=hci.Address.ANY,
                    data=data,
                )
                self.send_hci_packet(hci.HCI_LE_Extended_Advertising_Report_Event([report]))
        else:
            EventType = hci.HCI_LE_Advertising_Report_Event.EventType
            if meta['directed']:
                kind = EventType.ADV_DIRECT_IND
            elif meta['connectable'] and meta['scannable']:
                kind = EventType.ADV_IND
            elif meta['scannable']:
                kind = EventType.ADV_SCAN_IND
            else:
                kind = EventType.ADV_NONCONN_IND
            reports = [(kind, packet.data)]
            if with_scan_response:
                reports.append((EventType.SCAN_RSP, meta['scan_response']))
            for event_type, data in reports:
                report = hci.HCI_LE_Advertising_Report_Event.Report(
                    event_type=event_type,
                    address_type=address.address_type,
                    address=address,
                    data=data,
                    rssi=-50,
                )
                self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([report]))

    def retire(self, reason: int = CONNECTION_TIMEOUT_ERROR) -> None:
        '''Takes this controller off the link as if it had been switched off: its links end
        (the peers see `reason`), it stops advertising, scanning and connecting.'''
        if self.retired:
            return
        self.retired = True
        self.host = None
        for connection in list(self.le_connections.values()):
            try:
                connection.send_ll_control_pdu(ll.TerminateInd(reason))
            except Exception:  # the peer may be gone already
                logger.exception('cannot terminate a link of the retired controller')
        self.le_connections.clear()
        self.le_legacy_advertiser.stop()
        for advertising_set in self.advertising_sets.values():
            advertising_set.stop()
        self.le_scan_enable = False
        self.pending_le_connection = None
        if self in self.link.controllers:
            self.link.remove_controller(self)


# -----------------------------------------------------------------------------
# Controller A, served to Bluejay's host over TCP
# -----------------------------------------------------------------------------
class ControllerToHost:
    '''Hands controller A's packets to the connected host, until the controller is replaced.'''

    def __init__(self, session: HostSession):
        self.session = session
        self.active = True

    def on_packet(self, packet: bytes) -> None:
        if self.active:
            self.session.write(packet)


class HostToController:
    '''Hands the host's packets to the current controller A; a Reset gets a fresh controller.'''

    def __init__(self, port: HostPort, session: HostSession):
        self.port = port
        self.session = session

    def on_packet(self, packet: bytes) -> None:
        if self.port.session is not self.session:
            return
        if bytes(packet) == HCI_RESET_PACKET:
            self.port.replace_controller('HCI Reset')
            self.port.attach_controller(self.session)
        self.port.controller.on_packet(bytes(packet))


class HostSession(asyncio.Protocol):
    '''One TCP connection from a host.'''

    def __init__(self, port: HostPort):
        self.port = port
        self.transport: asyncio.Transport | None = None
        self.parser = PacketParser(HostToController(port, self))
        self.closed = False

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.port.on_session_started(self)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except Exception as error:  # an unknown H4 indicator: the stream cannot resync
            logger.error('malformed H4 stream from the host (%s); closing the connection', error)
            self.close()

    def eof_received(self):
        return False  # close the transport

    def connection_lost(self, error) -> None:
        self.closed = True
        self.port.on_session_ended(self)

    def write(self, packet: bytes) -> None:
        if not self.closed and self.transport is not None and not self.transport.is_closing():
            self.transport.write(packet)

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()


class HostPort:
    '''The TCP server of controller A. One host at a time: a new connection replaces the
    previous one, and each connection starts with a fresh controller.'''

    def __init__(self, link: LocalLink, public_address: str, extended: bool = False, variants: list[str] | None = None):
        self.link = link
        self.public_address = public_address
        # --extended-controller: controller A claims LE Extended Advertising, so that the
        # host uses advertising sets and extended scanning.
        self.extended = extended
        # --controller-variant: what kind of real controller A stands for.
        self.variants = list(variants or [])
        self.controller = self.new_controller()
        self.session: HostSession | None = None
        self.sink: ControllerToHost | None = None
        self.server: asyncio.AbstractServer | None = None
        self.port = 0

    def new_controller(self) -> RigController:
        return RigController('A', link=self.link, public_address=self.public_address, extended=self.extended, served=True,
                             variants=self.variants)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.server = await loop.create_server(lambda: HostSession(self), host='127.0.0.1', port=0)
        self.port = self.server.sockets[0].getsockname()[1]

    def replace_controller(self, why: str) -> None:
        logger.info('replacing controller A (%s)', why)
        if self.sink is not None:
            self.sink.active = False
            self.sink = None
        self.controller.retire(CONNECTION_TIMEOUT_ERROR)
        self.controller = self.new_controller()

    def attach_controller(self, session: HostSession) -> None:
        self.sink = ControllerToHost(session)
        self.controller.host = self.sink

    def on_session_started(self, session: HostSession) -> None:
        previous = self.session
        self.session = session
        if previous is not None:
            logger.info('a new host connection replaces the previous one')
            previous.close()
        self.replace_controller('host connected')
        self.attach_controller(session)
        emit('host_connected')

    def on_session_ended(self, session: HostSession) -> None:
        if self.session is not session:
            return
        self.session = None
        self.replace_controller('host disconnected')
        emit('host_disconnected')

    def ready_fields(self) -> dict[str, Any]:
        return {}

    def handlers(self) -> dict[str, Callable]:
        return {'host_controller': self.cmd_host_controller}

    async def cmd_host_controller(self, _command):
        '''What controller A (the one the host drives) is doing now, as a controller sees it:
        whether it scans, advertises (legacy or any advertising set) or initiates, its links.'''
        controller = self.controller
        return {
            'host_connected': self.session is not None,
            'scanning': bool(controller.le_scan_enable),
            'advertising': bool(controller.le_legacy_advertiser.enabled)
            or any(advertising_set.enabled for advertising_set in controller.advertising_sets.values()),
            'initiating': controller.pending_le_connection is not None,
            'connections': [
                {'handle': connection.handle, 'peer_address': address_text(connection.peer_address)}
                for connection in controller.le_connections.values()
            ],
        }

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
        if self.server is not None:
            self.server.close()
        self.controller.retire(CONNECTION_TIMEOUT_ERROR)


class PtySession:
    '''Controller A on a pseudo-terminal (`--uart-pty`), as a UART controller (Zephyr's
    hci_uart on an nRF52) is on /dev/ttyACM0: the host opens the slave, named `uart_path` in
    the `ready` line, and the rig holds the master. What controller A sends is cut into chunks
    of random sizes (1 to 16 octets, from --seed), each written on its own and half of them
    followed by a pause of a millisecond, so the host's reads end in the middle of packets.'''

    def __init__(self, port: HostPort, seed: int):
        self.port = port
        self.parser = PacketParser(HostToController(port, self))
        self.random = random.Random(seed)
        self.master, self.slave = os.openpty()
        # Raw from the start: the slave's line discipline must not echo or translate what
        # controller A writes before the host has opened the port (the host sets raw mode too).
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        os.set_blocking(self.master, False)
        self.closed = False
        self.stats = {'packets': 0, 'chunks': 0, 'split_packets': 0, 'received_bytes': 0}
        self.outgoing: asyncio.Queue[bytes] = asyncio.Queue()
        asyncio.get_running_loop().add_reader(self.master, self.on_readable)
        self.writer = asyncio.create_task(self.write_chunks())

    def on_readable(self) -> None:
        try:
            data = os.read(self.master, 65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            logger.warning('reading the pty master: %s', error)
            return
        self.stats['received_bytes'] += len(data)
        try:
            self.parser.feed_data(data)
        except Exception as error:  # an unknown H4 indicator: the stream cannot resync
            logger.error('malformed H4 stream from the host on the pty (%s)', error)

    def write(self, packet: bytes) -> None:
        if not self.closed:
            self.stats['packets'] += 1
            self.outgoing.put_nowait(bytes(packet))

    async def write_chunks(self) -> None:
        while True:
            packet = await self.outgoing.get()
            offset = pieces = 0
            while offset < len(packet) and not self.closed:
                chunk = packet[offset:offset + self.random.randint(1, 16)]
                await self.write_all(chunk)
                offset += len(chunk)
                pieces += 1
                self.stats['chunks'] += 1
                if self.random.random() < 0.5:
                    await asyncio.sleep(0.001)
            if pieces > 1:
                self.stats['split_packets'] += 1

    async def write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view and not self.closed:
            try:
                view = view[os.write(self.master, view):]
            except BlockingIOError:
                # The pty's buffer is full: the host is not reading (on a real UART, RTS/CTS
                # would hold the controller back). Try again shortly.
                await asyncio.sleep(0.001)
            except OSError as error:
                logger.warning('writing the pty master: %s', error)
                return

    def termios_fields(self) -> dict[str, Any]:
        '''The port's settings as the host left them (the master reads the slave's termios).'''
        iflag, oflag, cflag, lflag, ispeed, ospeed, _cc = termios.tcgetattr(self.master)
        rates = {getattr(termios, f'B{rate}'): rate for rate in (
            9600, 19200, 38400, 57600, 115200, 230400, 460800, 500000, 576000, 921600, 1000000, 1152000,
            1500000, 2000000, 2500000, 3000000, 3500000, 4000000) if hasattr(termios, f'B{rate}')}
        return {
            'ispeed': rates.get(ispeed, -ispeed), 'ospeed': rates.get(ospeed, -ospeed),
            'crtscts': bool(cflag & termios.CRTSCTS), 'clocal': bool(cflag & termios.CLOCAL), 'cread': bool(cflag & termios.CREAD),
            'cs8': cflag & termios.CSIZE == termios.CS8, 'parenb': bool(cflag & termios.PARENB), 'cstopb': bool(cflag & termios.CSTOPB),
            'icanon': bool(lflag & termios.ICANON), 'echo': bool(lflag & termios.ECHO), 'isig': bool(lflag & termios.ISIG),
            'opost': bool(oflag & termios.OPOST), 'icrnl': bool(iflag & termios.ICRNL), 'ixon': bool(iflag & termios.IXON),
        }

    def close(self) -> None:
        '''The device goes away: the master closes, and the host's reads see the hang-up.'''
        if self.closed:
            return
        self.closed = True
        asyncio.get_running_loop().remove_reader(self.master)
        self.writer.cancel()
        os.close(self.master)
        os.close(self.slave)
        self.port.on_session_ended(self)


class PtyHostPort(HostPort):
    '''`--uart-pty`: controller A on a pseudo-terminal instead of a TCP port (PtySession).'''

    def __init__(self, link: LocalLink, public_address: str, extended: bool, seed: int):
        super().__init__(link, public_address, extended)
        self.seed = seed
        self.pty: PtySession | None = None

    async def start(self) -> None:
        self.pty = PtySession(self, self.seed)
        # The pty is the host's connection from the start (no `host_connected`: `ready` comes first).
        self.session = self.pty
        self.replace_controller('pty opened')
        self.attach_controller(self.pty)

    def ready_fields(self) -> dict[str, Any]:
        return {'uart_path': self.pty.path if self.pty else None}

    def handlers(self) -> dict[str, Callable]:
        return {**super().handlers(), 'uart_stats': self.cmd_uart_stats, 'uart_termios': self.cmd_uart_termios,
                'uart_vanish': self.cmd_uart_vanish}

    def live_pty(self) -> PtySession:
        if self.pty is None or self.pty.closed:
            raise CommandError('the pty is gone (uart_vanish)')
        return self.pty

    async def cmd_uart_stats(self, _command):
        return dict(self.live_pty().stats)

    async def cmd_uart_termios(self, _command):
        return self.live_pty().termios_fields()

    async def cmd_uart_vanish(self, _command):
        self.live_pty().close()
        return {}


# -----------------------------------------------------------------------------
# Commands
# -----------------------------------------------------------------------------
class CommandError(Exception):
    pass


def require(command: dict[str, Any], key: str) -> Any:
    if key not in command:
        raise CommandError(f'missing "{key}"')
    return command[key]


def hex_bytes(text: str) -> bytes:
    try:
        return bytes.fromhex(text.replace(' ', '').replace(':', ''))
    except ValueError as error:
        raise CommandError(f'not hex: {text!r}') from error


def sequence_payload(uuid: str, sequence: int, size: int | None) -> bytes:
    '''The payload of notification or indication number `sequence`:
    2A37: flags 0x01 (UInt16 heart rate) then UInt16 LE sequence (mod 65536);
    2A19: one byte, sequence mod 256; any other: UInt32 LE sequence, zero-padded to `size`.'''
    if uuid == HEART_RATE_MEASUREMENT:
        return bytes([0x01]) + struct.pack('<H', sequence & 0xFFFF)
    if uuid == BATTERY_LEVEL:
        return bytes([sequence & 0xFF])
    payload = struct.pack('<I', sequence & 0xFFFFFFFF)
    if size is not None and size > len(payload):
        payload += bytes(size - len(payload))
    return payload


class Rig:
    '''Reads commands, runs them one after the other, and owns every device.'''

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.stop_event = asyncio.Event()
        self.background: set[asyncio.Task] = set()

    def spawn(self, coroutine) -> asyncio.Task:
        task = asyncio.create_task(coroutine)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task

    async def run_command(self, command: dict[str, Any], handlers: dict[str, Callable]) -> None:
        name = command.get('cmd')
        reply = {'cmd': name}
        if 'id' in command:
            reply['id'] = command['id']
        handler = handlers.get(name) if isinstance(name, str) else None
        if handler is None:
            emit('error', **reply, message=f'unknown command {name!r}; known: {sorted(handlers)}')
            return
        try:
            result = await handler(command)
        except CommandError as error:
            emit('error', **reply, message=str(error))
        except Exception as error:
            logger.exception('command %s failed', name)
            emit('error', **reply, message=f'{type(error).__name__}: {error}')
        else:
            emit('ack', **reply, **(result or {}))


# -----------------------------------------------------------------------------
# Peripheral role
# -----------------------------------------------------------------------------
class Store:
    '''The value of one of the rig's characteristics, with its access rules.'''

    def __init__(
        self,
        peripheral: Peripheral,
        uuid: str,
        value: bytes,
        properties: Props,
        readable: bool = True,
        read_error: int | None = None,
        max_length: int = 512,
        record: bool = False,
        on_write: Callable[[Connection, bytes], None] | None = None,
    ):
        self.peripheral = peripheral
        self.uuid = uuid
        self.value = value
        self.properties = properties
        self.readable = readable
        self.read_error = read_error
        self.max_length = max_length
        self.record = record
        self.received: list[bytes] = []
        self.on_write = on_write
        self.drop_next_read: int | None = None
        self.characteristic = gatt.Characteristic(
            uuid,
            properties,
            Perms.READABLE | Perms.WRITEABLE,
            gatt.CharacteristicValue(read=self.read, write=self.write),
        )

    async def read(self, connection: Connection) -> bytes:
        if self.drop_next_read is not None:
            reason, self.drop_next_read = self.drop_next_read, None
            emit('dropped', peripheral=self.peripheral.index, uuid=self.uuid, reason=reason)
            disconnected = asyncio.get_running_loop().create_future()
            connection.once('disconnection', lambda _reason: disconnected.done() or disconnected.set_result(None))
            await connection.disconnect(reason)
            await disconnected
            # The link is gone: Bumble drops this response for want of a connection.
            raise att.ATT_Error(att.ATT_UNLIKELY_ERROR_ERROR)
        if self.read_error is not None:
            raise att.ATT_Error(self.read_error)
        if not self.readable:
            raise att.ATT_Error(att.ATT_READ_NOT_PERMITTED_ERROR)
        return self.value

    def write(self, connection: Connection, value: bytes) -> None:
        opcode = current_att_opcode.get()
        with_response = opcode != att.Opcode.ATT_WRITE_COMMAND
        allowed = Props.WRITE if with_response else Props.WRITE_WITHOUT_RESPONSE
        if not self.properties & allowed:
            if with_response:
                raise att.ATT_Error(att.ATT_WRITE_NOT_PERMITTED_ERROR)
            return  # a write command is never answered
        if len(value) > self.max_length:
            raise att.ATT_Error(att.ATT_INVALID_ATTRIBUTE_LENGTH_ERROR)
        self.value = bytes(value)
        if self.record:
            self.received.append(bytes(value))
        emit(
            'written',
            peripheral=self.peripheral.index,
            uuid=self.uuid,
            value=bytes(value).hex(),
            with_response=with_response,
            prepared=opcode == att.Opcode.ATT_EXECUTE_WRITE_REQUEST,
        )
        if self.on_write is not None:
            self.on_write(connection, bytes(value))


class Peripheral:
    '''Controller Bk and the Bumble Device on it, advertising the rig's database.'''

    def __init__(self, rig: Rig, link: LocalLink, index: int, name: str, serial: str, interval_ms: float):
        self.rig = rig
        self.index = index
        self.name = name
        self.serial = serial
        self.address = hci.Address(PERIPHERAL_ADDRESS_FORMAT.format(index), hci.Address.RANDOM_DEVICE_ADDRESS)
        self.interval_ms = interval_ms
        # None on Rootcanal (--controller rootcanal), whose controllers are out of reach.
        self.controller, host = link.attach_device(f'B{index}')
        self.device = Device(name=name, address=self.address, host=host)
        self.stores: dict[str, Store] = {}
        self.connections: list[Connection] = []
        self.uart_chunks = 'whole'
        self.ignore_next_request = False
        self.uart_random = random.Random(rig.args.seed + index)
        self.dynamic_service: gatt.Service | None = None
        self.build_database()
        self.wrap_gatt_server()
        self.device.on('connection', self.on_connection)
        self.device.on('characteristic_subscription', self.on_subscription)

    # The database -----------------------------------------------------------
    def store(self, uuid: str, value: bytes, properties: Props, **options: Any) -> gatt.Characteristic:
        store = Store(self, uuid, value, properties, **options)
        self.stores[uuid] = store
        return store.characteristic

    def build_database(self) -> None:
        heart_rate = gatt.Service(
            HEART_RATE_SERVICE,
            [
                self.store(HEART_RATE_MEASUREMENT, bytes([0x01, 0x00, 0x00]), Props.NOTIFY, readable=False),
                self.store(BODY_SENSOR_LOCATION, bytes([0x01]), Props.READ | Props.WRITE, max_length=1),
            ],
        )
        device_information = gatt.Service(
            DEVICE_INFORMATION_SERVICE,
            [
                self.store(MANUFACTURER_NAME, b'Bumble', Props.READ),
                self.store(MODEL_NUMBER, b'Bluejay Peer', Props.READ),
                self.store(SERIAL_NUMBER, self.serial.encode(), Props.READ),
                self.store(FIRMWARE_REVISION, b'1.0.0', Props.READ),
            ],
        )
        battery = gatt.Service(
            BATTERY_SERVICE,
            [self.store(BATTERY_LEVEL, bytes([87]), Props.READ | Props.NOTIFY, max_length=1)],
        )
        custom = gatt.Service(
            CUSTOM_SERVICE,
            [
                self.store(
                    UART_RX, b'', Props.WRITE | Props.WRITE_WITHOUT_RESPONSE, readable=False, on_write=self.on_uart_write
                ),
                self.store(UART_TX, b'', Props.NOTIFY, readable=False),
                self.store(
                    LONG_VALUE,
                    bytes(i % 256 for i in range(LONG_VALUE_SIZE)),
                    Props.READ | Props.WRITE,
                    max_length=LONG_VALUE_SIZE,
                ),
                self.store(INDICATING, bytes(4), Props.READ | Props.INDICATE),
                self.store(READ_REFUSED, b'secret', Props.READ, read_error=att.ATT_READ_NOT_PERMITTED_ERROR),
                self.store(WRITE_SINK, b'', Props.WRITE_WITHOUT_RESPONSE, readable=False, record=True),
            ],
            # An include declaration, for the client's Find Included Services.
            included_services=[battery],
        )
        self.device.add_services([heart_rate, device_information, battery, custom])

    def wrap_gatt_server(self) -> None:
        server = self.device.gatt_server
        original = server.on_gatt_pdu

        def on_gatt_pdu(bearer, pdu):
            # `ignore_next_request`: leave one request unanswered, so the client's ATT
            # transaction timeout can be tested. Commands and confirmations are still served.
            if self.ignore_next_request and att.Opcode(pdu.op_code).name.endswith('_REQUEST'):
                self.ignore_next_request = False
                emit('ignored', peripheral=self.index, opcode=pdu.op_code)
                return
            # Handlers run in tasks created right here, so they see this context.
            token = current_att_opcode.set(pdu.op_code)
            try:
                original(bearer, pdu)
            finally:
                current_att_opcode.reset(token)

        server.on_gatt_pdu = on_gatt_pdu
        # Handles stay unique after a service is removed from the middle of the database.
        server.next_handle = lambda: 1 + max((a.handle for a in server.attributes), default=0)

    def advertising_data(self) -> bytes:
        def field(kind: int, payload: bytes) -> bytes:
            return bytes([len(payload) + 1, kind]) + payload

        return (
            field(0x01, bytes([0x06]))  # LE General Discoverable, BR/EDR not supported
            + field(0x03, struct.pack('<H', 0x180D))  # complete list of 16-bit UUIDs: Heart Rate
            + field(0xFF, struct.pack('<H', 0xFFFF) + bytes([1, 2, 3, 4]))  # manufacturer data
        )

    def scan_response_data(self) -> bytes:
        name = self.name.encode()[:27]
        return bytes([len(name) + 1, 0x09]) + name + bytes([4, 0x16]) + struct.pack('<H', 0x180F) + bytes([87])

    async def start(self) -> None:
        await self.device.power_on()
        await self.start_advertising()

    async def start_advertising(self) -> None:
        await self.device.start_advertising(
            auto_restart=True,
            advertising_data=self.advertising_data(),
            scan_response_data=self.scan_response_data(),
            advertising_interval_min=self.interval_ms,
            advertising_interval_max=self.interval_ms,
        )

    def description(self) -> dict[str, Any]:
        return {
            'index': self.index,
            'address': address_text(self.address),
            'address_type': 'random',
            'name': self.name,
            'serial': self.serial,
        }

    # Events -------------------------------------------------------------------
    def on_connection(self, connection: Connection) -> None:
        self.connections.append(connection)
        emit(
            'connected',
            peripheral=self.index,
            peer_address=address_text(connection.peer_address),
            peer_address_type=address_type_text(connection.peer_address),
            handle=connection.handle,
        )

        def on_disconnection(reason: int) -> None:
            if connection in self.connections:
                self.connections.remove(connection)
            emit('disconnected', peripheral=self.index, handle=connection.handle, reason=int(reason))

        def on_mtu() -> None:
            emit('mtu', peripheral=self.index, handle=connection.handle, value=connection.att_mtu)

        def on_phy(phy) -> None:
            emit('phy', peripheral=self.index, handle=connection.handle, tx_phy=int(phy.tx_phy), rx_phy=int(phy.rx_phy))

        connection.on('disconnection', on_disconnection)
        connection.on('connection_att_mtu_update', on_mtu)
        connection.on(connection.EVENT_CONNECTION_PHY_UPDATE, on_phy)

    def on_subscription(self, connection, characteristic, notify: bool, indicate: bool) -> None:
        emit(
            'subscribed',
            peripheral=self.index,
            uuid=uuid_text(characteristic.uuid),
            notify=bool(notify),
            indicate=bool(indicate),
        )

    def on_uart_write(self, connection: Connection, value: bytes) -> None:
        if len(value) == 3 and value[0] == UART_LONG_ANSWER_MARKER:
            length = struct.unpack_from('<H', value, 1)[0]
            answer = bytes(i % 256 for i in range(length))
        else:
            answer = value
        # After the handler returns, so that a Write Response goes out before the answer.
        asyncio.get_running_loop().call_soon(lambda: self.rig.spawn(self.send_uart_answer(connection, answer)))

    async def send_uart_answer(self, connection: Connection, answer: bytes) -> None:
        characteristic = self.stores[UART_TX].characteristic
        if not self.subscribed(connection, characteristic, 0x01):
            emit('warning', peripheral=self.index, message='UART write, but the central has not subscribed to UART TX')
            return
        chunks: list[int] = []
        offset = 0
        while offset < len(answer):
            largest = connection.att_mtu - 3
            size = largest if self.uart_chunks == 'whole' else self.uart_random.randint(1, largest)
            chunk = answer[offset : offset + size]
            await self.device.gatt_server.notify_subscriber(connection, characteristic, chunk)
            await connection.drain()
            chunks.append(len(chunk))
            offset += len(chunk)
        emit('uart_answered', peripheral=self.index, length=len(answer), chunks=chunks)

    # Helpers for commands --------------------------------------------------------
    def subscribed(self, connection: Connection, characteristic: gatt.Characteristic, bit: int) -> bool:
        cccd = self.device.gatt_server.subscribers.get(connection, {}).get(characteristic.handle)
        return bool(cccd) and len(cccd) == 2 and bool(cccd[0] & bit)

    def subscribers(self, characteristic: gatt.Characteristic, bit: int) -> list[Connection]:
        return [c for c in self.connections if self.subscribed(c, characteristic, bit)]

    def find(self, command: dict[str, Any]) -> Store:
        uuid = normalize_uuid(str(require(command, 'uuid')))
        if uuid not in self.stores:
            raise CommandError(f'no characteristic {uuid}; the rig has {sorted(self.stores)}')
        return self.stores[uuid]

    def characteristic(self, command: dict[str, Any]) -> gatt.Characteristic:
        uuid = normalize_uuid(str(require(command, 'uuid')))
        if uuid == SERVICE_CHANGED:
            return self.device.gatt_service.service_changed_characteristic
        return self.find(command).characteristic

    def payloads(self, command: dict[str, Any], uuid: str):
        count = int(command.get('count', 1))
        start = int(command.get('start', 0))
        size = command.get('size')
        fixed = hex_bytes(command['value']) if 'value' in command else None
        for sequence in range(start, start + count):
            yield fixed if fixed is not None else sequence_payload(uuid, sequence, size)

    async def notify(self, command: dict[str, Any]) -> int:
        characteristic = self.characteristic(command)
        uuid = uuid_text(characteristic.uuid)
        interval = float(command.get('interval_ms', 0)) / 1000.0
        targets = self.subscribers(characteristic, 0x01)
        if not targets:
            raise CommandError(f'no central has subscribed to notifications of {uuid}')
        sent = 0
        for payload in self.payloads(command, uuid):
            targets = [c for c in targets if c in self.connections]
            if not targets:
                break
            for connection in targets:
                await self.device.gatt_server.notify_subscriber(connection, characteristic, payload)
                await connection.drain()
            sent += 1
            if interval > 0:
                await asyncio.sleep(interval)
        return sent

    async def indicate(self, command: dict[str, Any]) -> int:
        characteristic = self.characteristic(command)
        uuid = uuid_text(characteristic.uuid)
        targets = self.subscribers(characteristic, 0x02)
        if not targets:
            raise CommandError(f'no central has subscribed to indications of {uuid}')
        confirmed = 0
        for payload in self.payloads(command, uuid):
            for connection in targets:
                await self.device.gatt_server.indicate_subscriber(connection, characteristic, payload)
            confirmed += 1
        return confirmed

    async def service_changed(self, start: int, end: int) -> int:
        characteristic = self.device.gatt_service.service_changed_characteristic
        value = struct.pack('<HH', start, end)
        targets = self.subscribers(characteristic, 0x02)
        for connection in targets:
            await self.device.gatt_server.indicate_subscriber(connection, characteristic, value)
        return len(targets)

    def add_dynamic_service(self) -> gatt.Service:
        if self.dynamic_service is not None:
            raise CommandError('the dynamic service is already there')
        service = gatt.Service(DYNAMIC_SERVICE, [self.store(DYNAMIC_VALUE, b'added', Props.READ)])
        self.device.gatt_server.add_service(service)
        self.device.gatt_server.attributes_by_handle.clear()
        self.dynamic_service = service
        return service

    def remove_service(self, uuid: str) -> gatt.Service:
        server = self.device.gatt_server
        service = next((s for s in server.services if uuid_text(s.uuid) == uuid), None)
        if service is None:
            raise CommandError(f'no service {uuid}')
        if uuid in (uuid_text(UUID('1800')), uuid_text(UUID('1801'))):
            raise CommandError('the GAP and GATT services stay')
        start, end = service.handle, service.end_group_handle
        server.attributes = [a for a in server.attributes if not start <= a.handle <= end]
        server.services.remove(service)
        server.attributes_by_handle.clear()
        for characteristic in service.characteristics:
            self.stores.pop(uuid_text(characteristic.uuid), None)
        if service is self.dynamic_service:
            self.dynamic_service = None
        return service


class PeripheralRole:
    def __init__(self, rig: Rig, link: LocalLink):
        self.rig = rig
        args = rig.args
        self.peripherals: list[Peripheral] = []
        for index in range(1, args.peripherals + 1):
            if args.peripherals == 1:
                name, serial = args.name, args.serial
            else:
                name, serial = f'{args.name} {index}', f'SN-{index:04d}'
            self.peripherals.append(Peripheral(rig, link, index, name, serial, args.adv_interval_ms))
        self.handlers = {
            'notify': self.cmd_notify,
            'stream': self.cmd_stream,
            'indicate': self.cmd_indicate,
            'set': self.cmd_set,
            'disconnect': self.cmd_disconnect,
            'drop_on_next_read': self.cmd_drop_on_next_read,
            'stop_advertising': self.cmd_stop_advertising,
            'start_advertising': self.cmd_start_advertising,
            'add_service': self.cmd_add_service,
            'remove_service': self.cmd_remove_service,
            'uart_mode': self.cmd_uart_mode,
            'received': self.cmd_received,
            'status': self.cmd_status,
            'ignore_next_request': self.cmd_ignore_next_request,
            'update_parameters': self.cmd_update_parameters,
            'phy_support': self.cmd_phy_support,
            'pair': self.cmd_pair,
            'open_l2cap': self.cmd_open_l2cap,
        }

    async def start(self) -> None:
        for peripheral in self.peripherals:
            await peripheral.start()

    def ready_fields(self) -> dict[str, Any]:
        first = self.peripherals[0]
        return {
            'peer_address': address_text(first.address),
            'peer_address_type': 'random',
            'peripherals': [p.description() for p in self.peripherals],
        }

    def target(self, command: dict[str, Any]) -> Peripheral:
        index = int(command.get('peripheral', 1))
        if not 1 <= index <= len(self.peripherals):
            raise CommandError(f'no peripheral {index}; the rig has 1 to {len(self.peripherals)}')
        return self.peripherals[index - 1]

    async def cmd_notify(self, command):
        sent = await self.target(command).notify(command)
        return {'count': sent}

    async def cmd_stream(self, command):
        peripheral = self.target(command)
        characteristic = peripheral.characteristic(command)
        if not peripheral.subscribers(characteristic, 0x01):
            raise CommandError(f'no central has subscribed to notifications of {uuid_text(characteristic.uuid)}')

        async def run():
            try:
                sent = await peripheral.notify(command)
                emit('streamed', peripheral=peripheral.index, uuid=uuid_text(characteristic.uuid), count=sent)
            except Exception as error:
                emit('error', cmd='stream', id=command.get('id'), message=f'{type(error).__name__}: {error}')

        self.rig.spawn(run())
        return {}

    async def cmd_indicate(self, command):
        peripheral = self.target(command)
        confirmed = await peripheral.indicate(command)
        uuid = uuid_text(peripheral.characteristic(command).uuid)
        emit('indicated', peripheral=peripheral.index, uuid=uuid, count=confirmed)
        return {'count': confirmed}

    async def cmd_set(self, command):
        store = self.target(command).find(command)
        store.value = hex_bytes(require(command, 'value'))
        return {}

    async def cmd_disconnect(self, command):
        peripheral = self.target(command)
        reason = int(command.get('reason', REMOTE_USER_TERMINATED))
        if not peripheral.connections:
            raise CommandError(f'peripheral {peripheral.index} has no connection')
        for connection in list(peripheral.connections):
            await connection.disconnect(reason)
        return {'reason': reason}

    async def cmd_drop_on_next_read(self, command):
        store = self.target(command).find(command)
        store.drop_next_read = int(command.get('reason', REMOTE_USER_TERMINATED))
        return {}

    async def cmd_ignore_next_request(self, command):
        self.target(command).ignore_next_request = True
        return {}

    def only_connection(self, command) -> Connection:
        peripheral = self.target(command)
        if not peripheral.connections:
            raise CommandError(f'peripheral {peripheral.index} has no connection')
        return next(iter(peripheral.connections))

    async def cmd_phy_support(self, command):
        # Which PHYs the peripheral's controller claims: '1m' alone takes LE 2M and LE Coded
        # out of its LE features, so that a PHY update it is asked for is refused.
        peripheral = self.target(command)
        if peripheral.controller is None:
            raise CommandError("phy_support needs Bumble's controller: Rootcanal's LE features are fixed")
        phys = set(command.get('phys', ['1m', '2m', 'coded']))
        features = peripheral.controller.le_features
        for name, feature in (('2m', hci.LeFeatureMask.LE_2M_PHY), ('coded', hci.LeFeatureMask.LE_CODED_PHY)):
            features = features | feature if name in phys else features & ~feature
        peripheral.controller.le_features = features
        return {'phys': sorted(phys)}

    async def cmd_update_parameters(self, command):
        # As the peripheral, over the L2CAP signaling channel (Core 6.0, Vol 3, Part A, 4.20).
        # Bumble returns once the central accepts the request; the central's Connection Update
        # takes effect later, and the ack reports the parameters only then.
        connection = self.only_connection(command)
        updated = asyncio.get_running_loop().create_future()

        def on_update() -> None:
            if not updated.done():
                updated.set_result(None)

        connection.on(connection.EVENT_CONNECTION_PARAMETERS_UPDATE, on_update)
        try:
            await connection.update_parameters(
                float(require(command, 'interval_min_ms')),
                float(require(command, 'interval_max_ms')),
                int(command.get('latency', 0)),
                float(require(command, 'timeout_ms')),
                use_l2cap=True,
            )
            await asyncio.wait_for(updated, timeout=10)
        finally:
            connection.remove_listener(connection.EVENT_CONNECTION_PARAMETERS_UPDATE, on_update)
        parameters = connection.parameters
        return {'interval_ms': parameters.connection_interval, 'latency': parameters.peripheral_latency,
                'timeout_ms': parameters.supervision_timeout}

    async def cmd_pair(self, command):
        connection = self.only_connection(command)
        try:
            await asyncio.wait_for(connection.pair(), timeout=10)
        except Exception as error:
            return {'paired': False, 'error': f'{type(error).__name__}: {error}'}
        return {'paired': True}

    async def cmd_open_l2cap(self, command):
        from bumble import l2cap
        connection = self.only_connection(command)
        try:
            await asyncio.wait_for(
                connection.create_l2cap_channel(spec=l2cap.LeCreditBasedChannelSpec(psm=int(require(command, 'spsm')))),
                timeout=10,
            )
        except Exception as error:
            return {'opened': False, 'error': f'{type(error).__name__}: {error}'}
        return {'opened': True}

    async def cmd_stop_advertising(self, command):
        await self.target(command).device.stop_advertising()
        return {}

    async def cmd_start_advertising(self, command):
        await self.target(command).start_advertising()
        return {}

    async def cmd_add_service(self, command):
        peripheral = self.target(command)
        service = peripheral.add_dynamic_service()
        indicated = await peripheral.service_changed(service.handle, service.end_group_handle)
        return {'uuid': DYNAMIC_SERVICE, 'start': service.handle, 'end': service.end_group_handle, 'indicated': indicated}

    async def cmd_remove_service(self, command):
        peripheral = self.target(command)
        uuid = normalize_uuid(str(command.get('uuid', DYNAMIC_SERVICE)))
        service = peripheral.remove_service(uuid)
        indicated = await peripheral.service_changed(service.handle, service.end_group_handle)
        return {'uuid': uuid, 'start': service.handle, 'end': service.end_group_handle, 'indicated': indicated}

    async def cmd_uart_mode(self, command):
        peripheral = self.target(command)
        chunks = require(command, 'chunks')
        if chunks not in ('whole', 'random'):
            raise CommandError('chunks must be "whole" or "random"')
        peripheral.uart_chunks = chunks
        if 'seed' in command:
            peripheral.uart_random.seed(int(command['seed']))
        return {'chunks': chunks}

    async def cmd_received(self, command):
        store = self.target(command).find(command)
        values = [value.hex() for value in store.received]
        if command.get('clear'):
            store.received.clear()
        return {'values': values}

    async def cmd_status(self, command):
        peripheral = self.target(command)
        return {
            'advertising': peripheral.device.is_advertising,
            'connections': [
                {
                    'handle': c.handle,
                    'peer_address': address_text(c.peer_address),
                    'peer_address_type': address_type_text(c.peer_address),
                    'mtu': c.att_mtu,
                }
                for c in peripheral.connections
            ],
            'services': [uuid_text(s.uuid) for s in peripheral.device.gatt_server.services],
        }

    async def stop(self) -> None:
        pass


# -----------------------------------------------------------------------------
# Central role (for tests of Bluejay's peripheral role)
# -----------------------------------------------------------------------------
class CentralRole:
    def __init__(self, rig: Rig, link: LocalLink):
        self.rig = rig
        self.address = hci.Address(CENTRAL_ADDRESS, hci.Address.RANDOM_DEVICE_ADDRESS)
        self.controller, host = link.attach_device('B1')
        self.device = Device(name=rig.args.name, address=self.address, host=host)
        self.connection: Connection | None = None
        self.peer = None
        self.dedup = True
        self.seen: set[tuple] = set()
        self.device.on('advertisement', self.on_advertisement)
        self.handlers = {
            'scan': self.cmd_scan,
            'stop_scan': self.cmd_stop_scan,
            'connect': self.cmd_connect,
            'discover': self.cmd_discover,
            'read': self.cmd_read,
            'write': self.cmd_write,
            'subscribe': self.cmd_subscribe,
            'mtu': self.cmd_mtu,
            'disconnect': self.cmd_disconnect,
        }

    async def start(self) -> None:
        await self.device.power_on()
        if not self.rig.args.no_scan:
            await self.device.start_scanning(active=True)

    def ready_fields(self) -> dict[str, Any]:
        return {'peer_address': address_text(self.address), 'peer_address_type': 'random'}

    def on_advertisement(self, advertisement) -> None:
        key = (bytes(advertisement.address), advertisement.is_scan_response, advertisement.data_bytes)
        if self.dedup and key in self.seen:
            return
        self.seen.add(key)
        emit(
            'advertisement',
            address=address_text(advertisement.address),
            address_type=address_type_text(advertisement.address),
            rssi=advertisement.rssi,
            connectable=bool(advertisement.is_connectable),
            scan_response=bool(advertisement.is_scan_response),
            # Bumble merges a scan response with the advertising data before it.
            data=bytes(advertisement.data).hex(),
        )

    def connected(self):
        if self.connection is None or self.peer is None:
            raise CommandError('not connected')
        return self.peer

    async def cmd_scan(self, command):
        self.dedup = bool(command.get('dedup', True))
        self.seen.clear()
        if self.device.scanning:
            await self.device.stop_scanning()
        await self.device.start_scanning(active=bool(command.get('active', True)))
        return {}

    async def cmd_stop_scan(self, command):
        await self.device.stop_scanning()
        return {}

    async def cmd_connect(self, command):
        address_type = hci.Address.PUBLIC_DEVICE_ADDRESS if command.get('address_type') == 'public' else hci.Address.RANDOM_DEVICE_ADDRESS
        address = hci.Address(str(require(command, 'address')), address_type)
        if self.device.scanning:
            await self.device.stop_scanning()
        connection = await self.device.connect(address, timeout=float(command.get('timeout_s', 10)))
        self.connection = connection
        from bumble.device import Peer

        self.peer = Peer(connection)
        emit(
            'connected',
            peer_address=address_text(connection.peer_address),
            peer_address_type=address_type_text(connection.peer_address),
            handle=connection.handle,
        )

        def on_disconnection(reason: int) -> None:
            if self.connection is connection:
                self.connection = None
                self.peer = None
            emit('disconnected', handle=connection.handle, reason=int(reason))

        connection.on('disconnection', on_disconnection)
        if command.get('discover', True):
            await self.discover()
        return {'handle': connection.handle}

    async def discover(self) -> None:
        peer = self.connected()
        await peer.discover_services()
        services = []
        for service in peer.services:
            await service.discover_characteristics()
            services.append(
                {
                    'uuid': uuid_text(service.uuid),
                    'start': service.handle,
                    'end': service.end_group_handle,
                    'characteristics': [
                        {'uuid': uuid_text(c.uuid), 'handle': c.handle, 'properties': int(c.properties)}
                        for c in service.characteristics
                    ],
                }
            )
        emit('database', services=services)

    def find_characteristic(self, command):
        peer = self.connected()
        uuid = normalize_uuid(str(require(command, 'uuid')))
        for service in peer.services:
            for characteristic in service.characteristics:
                if uuid_text(characteristic.uuid) == uuid:
                    return characteristic
        raise CommandError(f'no discovered characteristic {uuid} (send "discover" first)')

    async def cmd_discover(self, command):
        await self.discover()
        return {}

    async def cmd_read(self, command):
        characteristic = self.find_characteristic(command)
        value = await characteristic.read_value()
        return {'value': bytes(value).hex()}

    async def cmd_write(self, command):
        characteristic = self.find_characteristic(command)
        value = hex_bytes(require(command, 'value'))
        await characteristic.write_value(value, with_response=bool(command.get('with_response', True)))
        return {}

    async def cmd_subscribe(self, command):
        characteristic = self.find_characteristic(command)
        uuid = uuid_text(characteristic.uuid)

        def on_value(value: bytes) -> None:
            emit('notification', uuid=uuid, value=bytes(value).hex())

        await characteristic.subscribe(on_value, prefer_notify=not command.get('indicate', False))
        return {}

    async def cmd_mtu(self, command):
        peer = self.connected()
        mtu = await peer.request_mtu(int(require(command, 'value')))
        return {'value': mtu}

    async def cmd_disconnect(self, command):
        return await disconnect(self.connection, command)

    async def stop(self) -> None:
        pass


async def disconnect(connection: Connection | None, command: dict[str, Any]) -> dict[str, Any]:
    '''A central's `disconnect` command: ends its link with `reason` (default 0x13).'''
    if connection is None:
        raise CommandError('not connected')
    reason = int(command.get('reason', REMOTE_USER_TERMINATED))
    await connection.disconnect(reason)
    return {'reason': reason}


# -----------------------------------------------------------------------------
# Main
# -----------------------------------------------------------------------------
async def read_commands(rig: Rig, handlers: dict[str, Callable]) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while not rig.stop_event.is_set():
        line = await reader.readline()
        if not line:
            logger.info('stdin closed: quitting')
            break
        text = line.decode(errors='replace').strip()
        if not text:
            continue
        try:
            command = json.loads(text)
            if not isinstance(command, dict):
                raise ValueError('not a JSON object')
        except ValueError as error:
            emit('error', cmd=None, message=f'cannot parse {text!r}: {error}')
            continue
        if command.get('cmd') == 'quit':
            reply = {'cmd': 'quit'}
            if 'id' in command:
                reply['id'] = command['id']
            emit('ack', **reply)
            break
        await rig.run_command(command, handlers)
    rig.stop_event.set()


async def watch_parent(rig: Rig) -> None:
    '''Quits when the process that started the rig is gone (reparented).'''
    parent = os.getppid()
    while not rig.stop_event.is_set():
        await asyncio.sleep(1.0)
        if os.getppid() != parent:
            logger.info('parent process %d is gone: quitting', parent)
            rig.stop_event.set()


def configure_logging(level: str) -> None:
    '''Logs on stderr (stdout carries only events); Bumble's own logs only from warnings on,
    unless `level` is DEBUG (which shows its HCI traces).'''
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level.upper(), logging.INFO),
        format='%(asctime)s %(levelname)s %(name)s: %(message)s',
    )
    if level.upper() != 'DEBUG':
        logging.getLogger('bumble').setLevel(logging.WARNING)


def add_controller_arguments(parser: argparse.ArgumentParser) -> None:
    '''`--controller` and `--hci-port`: which controllers the rig's devices and Bluejay's host use.'''
    parser.add_argument('--controller', choices=['bumble', 'rootcanal'], default='bumble',
                        help="bumble: Bumble's controllers on one LocalLink (controller A served to the host); "
                             "rootcanal: a controller of Rootcanal's per device, at --hci-port")
    parser.add_argument('--hci-port', type=int, default=0, help="Rootcanal's HCI port (with --controller rootcanal)")


def check_controller_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.controller == 'rootcanal':
        # --extended-controller is Bumble's controller A only; Rootcanal's controllers always
        # have extended advertising, so the same test runs on both with the same arguments.
        if not 0 < args.hci_port < 65536:
            parser.error('--controller rootcanal needs --hci-port (Rootcanal\'s HCI port)')


async def serve(args: argparse.Namespace, make_role: Callable[[Rig, RigLink], Any], role_name: str) -> int:
    '''Runs a rig script: one link, controller A served to Bluejay's host, and the role that
    `make_role` puts on the link (its `start`, `ready_fields`, `handlers` and `stop`); with
    `--controller rootcanal`, Rootcanal's radio instead and no controller A (the `ready` port
    is Rootcanal's HCI port, where the host gets a controller of its own). Reports
    `ready`, runs the commands read on stdin and ends on `quit`, at the end of stdin, on
    SIGTERM/SIGINT/SIGHUP and when the parent process dies; the role stops (and ends its
    links) before controller A goes.'''
    configure_logging(args.log_level)
    rig = Rig(args)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(signum, rig.stop_event.set)

    variants = list(getattr(args, 'controller_variant', None) or [])
    unknown = sorted(set(variants) - set(CONTROLLER_VARIANTS))
    if unknown:
        raise SystemExit(f'unknown --controller-variant {", ".join(unknown)}; known: {", ".join(sorted(CONTROLLER_VARIANTS))}')
    port: HostPort | PtyHostPort | None = None
    public_address: str | None = None
    if args.controller == 'rootcanal':
        # Every device on a controller of Rootcanal's; Bluejay's host takes one more there.
        if variants or getattr(args, 'uart_pty', False):
            raise SystemExit('--controller-variant and --uart-pty need the rig\'s own controller A, not --controller rootcanal')
        link = rootcanal_radio.RootcanalRadio(args.hci_port)
    else:
        link = RigLink()
        extended = bool(getattr(args, 'extended_controller', False))
        if getattr(args, 'uart_pty', False):
            if variants:
                raise SystemExit('--controller-variant is not served on a pseudo-terminal (--uart-pty)')
            port = PtyHostPort(link, HOST_PUBLIC_ADDRESS, extended, args.seed)
        else:
            port = HostPort(link, HOST_PUBLIC_ADDRESS, extended=extended, variants=variants)
        public_address = HOST_PUBLIC_ADDRESS
        if {'no-public-address', 'zephyr-static-address'} & set(variants):
            public_address = '00:00:00:00:00:00'
    role = make_role(rig, link)
    try:
        await link.connect()
        await role.start()
        if port is not None:
            await port.start()
        host_port = port.port if port is not None else args.hci_port
        emit(
            'ready',
            port=host_port,
            role=role_name,
            controller=args.controller,
            # On Rootcanal the host's controller gets its address when the host connects.
            host_public_address=public_address,
            controller_variants=variants,
            **({'host_static_address': ZEPHYR_STATIC_ADDRESS} if 'zephyr-static-address' in variants else {}),
            **(port.ready_fields() if port is not None else {}),
            **role.ready_fields(),
        )
        logger.info('ready on 127.0.0.1:%d (%s)', host_port, args.controller)
        rig.spawn(read_commands(rig, {**role.handlers, **(port.handlers() if port is not None else {})}))
        rig.spawn(watch_parent(rig))
        await rig.stop_event.wait()
    finally:
        await role.stop()
        if port is not None:
            port.close()
        await link.close()
        for task in list(rig.background):
            task.cancel()
        await asyncio.gather(*rig.background, return_exceptions=True)
    logger.info('stopped')
    return 0


def add_controller_variant_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--controller-variant', action='append', default=[], choices=sorted(CONTROLLER_VARIANTS),
                        metavar='NAME', help='controller A stands for a class of real controllers (repeatable): '
                        + '; '.join(f'{name}: {what}' for name, what in sorted(CONTROLLER_VARIANTS.items())))


async def main() -> int:
    parser = argparse.ArgumentParser(description="Bumble peer for Bluejay's interop tests")
    parser.add_argument('--role', choices=['peripheral', 'central'], default='peripheral')
    parser.add_argument('--name', default='Bluejay Peer')
    parser.add_argument('--serial', default='SN-0001', help='serial number (2A25) of a single peripheral')
    parser.add_argument('--peripherals', type=int, default=1, help='number of peripherals B1..BN')
    parser.add_argument('--adv-interval-ms', type=float, default=50.0, help='advertising interval of the peripherals')
    parser.add_argument('--seed', type=int, default=1, help='seed of the random UART chunk sizes')
    parser.add_argument('--no-scan', action='store_true', help='central role: do not scan at start')
    parser.add_argument('--extended-controller', action='store_true',
                        help='controller A claims LE Extended Advertising (advertising sets, extended scanning)')
    add_controller_variant_argument(parser)
    parser.add_argument('--uart-pty', action='store_true',
                        help='serve controller A on a pseudo-terminal (uart_path in ready), in random chunks, instead of TCP')
    parser.add_argument('--log-level', default=os.environ.get('BLUEJAY_PEER_LOG', 'INFO'))
    parser.add_argument('--plugin', action='append', default=[],
                        help='module beside this script whose install(role, rig) adds behaviour (repeatable)')
    add_controller_arguments(parser)
    args = parser.parse_args()
    check_controller_arguments(parser, args)
    if not 1 <= args.peripherals <= 32:
        parser.error('--peripherals must be from 1 to 32')

    def make_role(rig: Rig, link: RigLink):
        role = PeripheralRole(rig, link) if args.role == 'peripheral' else CentralRole(rig, link)
        # Plugins: extra peripheral behaviour kept in files of their own (bluejay_*.py).
        for plugin in args.plugin:
            importlib.import_module(plugin).install(role, rig)
        return role

    return await serve(args, make_role, args.role)


if __name__ == '__main__':
    try:
        sys.exit(asyncio.run(main()))
    except BrokenPipeError:
        # Whoever read our stdout is gone.
        sys.exit(0)
