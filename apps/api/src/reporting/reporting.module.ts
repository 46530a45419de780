import { Module } from '@nestjs/common';

/** Read-only views of payments: agent profiles and history, site stats and payments. */
@Module({})
export class ReportingModule {}
