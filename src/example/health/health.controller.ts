import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ReadinessService, type ReadinessReport } from './readiness.service';

/** Liveness and readiness for load balancers and orchestrators; no authentication. */
@Controller('health')
export class HealthController {
  constructor(protected readonly readiness: ReadinessService) {}

  /** The process is up and answering HTTP. */
  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Ready to serve a user: 200 when so, else 503 with what is not ready. */
  @Get('ready')
  ready(@Res({ passthrough: true }) res: Response): Promise<ReadinessReport> {
    return this.answer(res);
  }

  /** Same as /health/ready (the address the README and older checks use). */
  @Get()
  health(@Res({ passthrough: true }) res: Response): Promise<ReadinessReport> {
    return this.answer(res);
  }

  protected async answer(res: Response): Promise<ReadinessReport> {
    const report = await this.readiness.report();
    res.status(report.status === 'ready' ? 200 : 503);
    return report;
  }
}
