import { ApiParam } from '@nestjs/swagger';

/** Documents a route's `{site_id}`; any other text is answered like an unknown site, 404. */
export const ApiSiteIdParam = () =>
  ApiParam({ name: 'site_id', schema: { type: 'string', format: 'uuid' }, description: 'The site’s id' });
