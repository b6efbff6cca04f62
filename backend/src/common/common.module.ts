import { Module } from '@nestjs/common';
import { WebSocketRouter } from './websocket-router';

/** What every domain may use and none owns: the WebSocket router of the HTTP server. */
@Module({
  providers: [WebSocketRouter],
  exports: [WebSocketRouter],
})
export class CommonModule {}
