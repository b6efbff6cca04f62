import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches, MaxLength } from 'class-validator';

/** `POST /path-hints` body and `DELETE /path-hints?template=`. */
export class PathHintDto {
  @ApiProperty({ example: '/repos/{owner}/{repo}', description: 'A path template; each {name} segment is a parameter' })
  @IsString()
  @MaxLength(2000)
  @Matches(/^\//, { message: 'template must start with /' })
  template: string;
}
