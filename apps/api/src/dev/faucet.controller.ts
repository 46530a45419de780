import { Body, Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import { parseUsdAmount, USDC_ABI } from '@crawlgate/core';
import { mintTestUsdc } from '@crawlgate/devchain';
import { IsDefined } from 'class-validator';
import { getAddress } from 'viem';
import type { ChainContext } from '../chain/chain-context';
import { CHAIN } from '../chain/tokens';
import { IsEvmAddressString } from '../http/validators';
import { ValidationFailed } from '../http/validation-items';

const MAX_FAUCET_MICROS = 10_000_000_000n; // 10,000 test USDC a call

export class FaucetDto {
  @ApiProperty({ example: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' })
  @IsEvmAddressString()
  address!: string;

  @ApiProperty({
    oneOf: [{ type: 'number' }, { type: 'string' }],
    example: '10',
    description: 'Test USDC to mint, up to 10,000, at most 6 decimals.',
  })
  @IsDefined()
  amount_usd!: number | string;
}

export class FaucetView {
  @ApiProperty({ description: 'EIP-55 checksummed' }) address!: string;
  @ApiProperty({ description: 'Atomic USDC units minted (6 decimals), a decimal string', example: '10000000' })
  minted!: string;
  @ApiProperty({ description: 'Atomic USDC units held afterwards, a decimal string' }) balance!: string;
  @ApiProperty() tx_hash!: string;
}

/** Mints test USDC on the `local` network only; the module is not loaded anywhere else. */
@ApiTags('dev')
@Controller('dev/faucet')
export class FaucetController {
  constructor(@Inject(CHAIN) private readonly chain: ChainContext) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Mint test USDC (local network only)' })
  @ApiResponse({ status: 200, type: FaucetView, description: 'Minted; the balance afterwards is returned.' })
  async mint(@Body() body: FaucetDto): Promise<FaucetView> {
    const amount = faucetAmount(body.amount_usd);
    const to = getAddress(body.address.toLowerCase());
    const txHash = await mintTestUsdc({ rpcUrl: this.chain.rpcUrl, usdc: this.chain.usdc, to, amount });
    const balance = await this.chain.publicClient.readContract({
      address: this.chain.usdc,
      abi: USDC_ABI,
      functionName: 'balanceOf',
      args: [to],
    });
    return { address: to, minted: amount.toString(), balance: balance.toString(), tx_hash: txHash };
  }
}

function faucetAmount(value: unknown): bigint {
  const parsed = parseUsdAmount(value, MAX_FAUCET_MICROS);
  if (!parsed.ok || parsed.micros === 0n) {
    throw new ValidationFailed([
      {
        loc: ['body', 'amount_usd'],
        msg: 'amount_usd must be more than 0 and at most 10000, with at most 6 decimals',
        type: parsed.ok ? 'greater_than' : parsed.type,
        input: value,
      },
    ]);
  }
  return parsed.micros;
}
