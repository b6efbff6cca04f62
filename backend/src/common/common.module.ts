import { Module } from '@nestjs/common';
import { FoldsBeforeRead } from './folds-before-read';
import { WebSocketRouter } from './websocket-router';

/**
 * What every domain may use and none owns: the WebSocket router of the HTTP server, and the wait
 * for queued evidence's folds that the gates' reads make.
 */
@Module({
  providers: [WebSocketRouter, FoldsBeforeRead],
  exports: [WebSocketRouter, FoldsBeforeRead],
})
export class CommonModule {}
