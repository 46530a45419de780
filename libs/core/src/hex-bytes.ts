/** 0x followed by whole bytes in hexadecimal, at least one: how a signature is written. */
export const HEX_BYTES = /^0x(?:[0-9a-fA-F]{2})+$/;
