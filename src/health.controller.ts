import { Controller, Get } from '@nestjs/common';

@Controller()
export class HealthController {
  /** Liveness for load balancers and the README's smoke check; no authentication. */
  @Get('health')
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
