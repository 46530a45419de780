import { Body, Controller, Get, Headers, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { PublisherAuth } from '../auth/authenticated';
import { CurrentPublisher } from '../auth/request-context';
import type { Publisher } from '../generated/prisma/client';
import { NoStore } from '../http/no-store';
import type { FastifyRequest } from 'fastify';
import { LimitPerIpAndNetwork } from '../rate-limit/limits';
import { clientNetwork } from '../rate-limit/trackers';
import {
  ApiKeyView,
  ChangePasswordDto,
  LoginDto,
  PublisherView,
  RegisteredPublisherView,
  RegisterPublisherDto,
  UpdatePublisherDto,
} from './publishers.dto';
import { PublishersService, publisherView } from './publishers.service';

@ApiTags('publishers')
@Controller('publishers')
export class PublishersController {
  constructor(private readonly publishers: PublishersService) {}

  @Post('register')
  @NoStore()
  @LimitPerIpAndNetwork(5)
  @ApiOperation({ summary: 'Create a publisher account and its first API key' })
  @ApiResponse({ status: 201, type: RegisteredPublisherView, description: 'The API key is shown only here.' })
  @ApiResponse({ status: 409, description: 'Email already registered' })
  register(@Body() body: RegisterPublisherDto, @Req() request: FastifyRequest): Promise<RegisteredPublisherView> {
    return this.publishers.register(body, clientNetwork(request.ip));
  }

  @Post('login')
  @NoStore()
  @HttpCode(200)
  @LimitPerIpAndNetwork(5)
  @ApiOperation({ summary: 'Log in with email and password: a new API key' })
  @ApiResponse({
    status: 200,
    type: ApiKeyView,
    description: 'Logging in rotates the API key: the previous one stops working.',
  })
  @ApiResponse({ status: 401, description: 'Invalid email or password' })
  login(@Body() body: LoginDto, @Req() request: FastifyRequest): Promise<ApiKeyView> {
    return this.publishers.login(body, clientNetwork(request.ip));
  }

  @Get('me')
  @NoStore()
  @PublisherAuth()
  @ApiOperation({ summary: 'Your publisher account' })
  @ApiResponse({ status: 200, type: PublisherView })
  me(@CurrentPublisher() publisher: Publisher): PublisherView {
    return publisherView(publisher);
  }

  @Patch('me')
  @NoStore()
  @PublisherAuth()
  @ApiOperation({ summary: 'Change your name or payout address' })
  @ApiHeader({
    name: 'X-Confirm-Password',
    required: false,
    description:
      "Required when payout_address changes: the password as typed, or as an RFC 8187 ext-value (UTF-8'' then the percent-encoded UTF-8) for a password a header cannot carry as is (spaces at either end, characters beyond Latin-1); checked at most 5 times per account in 15 minutes (then 429)",
  })
  @ApiResponse({ status: 200, type: PublisherView })
  @ApiResponse({
    status: 401,
    description: 'Missing or invalid API key, or payout_address changes without the right X-Confirm-Password',
  })
  update(
    @CurrentPublisher() publisher: Publisher,
    @Body() body: UpdatePublisherDto,
    @Headers('x-confirm-password') confirmPassword: string | undefined,
  ): Promise<PublisherView> {
    return this.publishers.update(publisher, body, confirmPassword);
  }

  @Post('me/password')
  @NoStore()
  @HttpCode(200)
  @PublisherAuth()
  @ApiOperation({ summary: 'Change your password with the current one: your API key rotates with it' })
  @ApiResponse({
    status: 200,
    type: ApiKeyView,
    description: 'The new API key; the previous key and password stop working.',
  })
  @ApiResponse({
    status: 401,
    description:
      'Missing or invalid API key, or current_password does not match (checked at most 5 times per account in 15 minutes, with X-Confirm-Password; then 429)',
  })
  changePassword(
    @CurrentPublisher() publisher: Publisher,
    @Body() body: ChangePasswordDto,
    @Req() request: FastifyRequest,
  ): Promise<ApiKeyView> {
    return this.publishers.changePassword(publisher, body, clientNetwork(request.ip));
  }

  @Post('me/api-key/rotate')
  @NoStore()
  @HttpCode(200)
  @PublisherAuth()
  @ApiOperation({ summary: 'Rotate your API key: the previous one stops working' })
  @ApiResponse({ status: 200, type: ApiKeyView })
  rotateApiKey(@CurrentPublisher() publisher: Publisher): Promise<ApiKeyView> {
    return this.publishers.rotateApiKey(publisher);
  }
}
