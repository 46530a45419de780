import { Header } from '@nestjs/common';

/** For answers that carry a key, token, secret or the account's own data: no cache may keep them. */
export const NoStore = () => Header('Cache-Control', 'no-store');
