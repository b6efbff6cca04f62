import { Controller, Get, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { AuthConfigResponse, LogoutResponse } from '@spectator/shared';
import type { Request, Response } from 'express';
import { CurrentPrincipal, RequireScope } from '../common/access';
import type { Principal } from '../common/principal';
import { cookieNames, cookieOf, SIGN_IN_COOKIE_PATH, setCookie } from './cookies';
import { OidcService, SIGN_IN_SECONDS } from './oidc.service';
import { TokenWatch } from './token-watch';

/**
 * People's sign-in through the identity provider: `login` sends the browser there, `callback`
 * brings it back with a session cookie, `logout` ends the session.
 */
@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly oidc: OidcService,
    private readonly watch: TokenWatch,
  ) {}

  /** How people sign in here, for the dashboard's sign-in page. */
  @Get('config')
  @RequireScope('public')
  config(): AuthConfigResponse {
    return { sso: this.oidc.enabled, providerName: this.oidc.providerName };
  }

  /** Starts a sign-in: redirects to the provider; `returnTo` is a path of this site to come back to. */
  @Get('login')
  @RequireScope('public')
  async login(@Query('returnTo') returnTo: unknown, @Res() response: Response): Promise<void> {
    const { url, state } = await this.oidc.begin(returnTo);
    const secure = this.oidc.secureCookies;
    response.setHeader(
      'Set-Cookie',
      setCookie(cookieNames(secure).signIn, state, {
        path: SIGN_IN_COOKIE_PATH,
        maxAgeSeconds: SIGN_IN_SECONDS,
        secure,
      }),
    );
    response.redirect(302, url.href);
  }

  /** The provider's redirect back: checks state, nonce and PKCE, sets the session cookie, goes to `returnTo`. */
  @Get('callback')
  @RequireScope('public')
  async callback(@Req() request: Request, @Res() response: Response): Promise<void> {
    const secure = this.oidc.secureCookies;
    const names = cookieNames(secure);
    const clearSignIn = setCookie(names.signIn, '', { path: SIGN_IN_COOKIE_PATH, maxAgeSeconds: 0, secure });
    // The sign-in cookie is spent whatever happens: a second callback with it is refused.
    response.setHeader('Set-Cookie', clearSignIn);
    const query = new URL(request.url, 'http://callback').searchParams;
    const signedIn = await this.oidc.finish(query, cookieOf(request.headers, names.signIn));
    response.setHeader('Set-Cookie', [
      clearSignIn,
      setCookie(names.session, signedIn.sessionId, { path: '/', maxAgeSeconds: this.oidc.sessionSeconds, secure }),
    ]);
    response.redirect(302, signedIn.returnTo);
  }

  /**
   * Signs out: the session ends on the server and its cookie is cleared. `endSessionUrl`: where
   * the browser goes next to sign out of the identity provider too (when it offers that), which
   * then sends it back to SPECTATOR_OIDC_POST_LOGOUT_URL; null for a token or no such provider.
   */
  @Post('logout')
  @HttpCode(200)
  @RequireScope('read')
  async logout(
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) response: Response,
  ): Promise<LogoutResponse> {
    let endSessionUrl: URL | null = null;
    if (principal.kind === 'person') {
      endSessionUrl = await this.oidc.end(principal.sessionHash);
      // Its dashboards' live events close now on this replica, on others within the check interval.
      await this.watch.checkNow();
    }
    const secure = this.oidc.secureCookies;
    response.setHeader(
      'Set-Cookie',
      setCookie(cookieNames(secure).session, '', { path: '/', maxAgeSeconds: 0, secure }),
    );
    return { endSessionUrl: endSessionUrl?.href ?? null };
  }
}
