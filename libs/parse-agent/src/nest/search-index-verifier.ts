import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import { SearchIndexer } from '../retrieval/search-indexer';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { EmbeddingProvider } from '../ports/embedding-provider';
import { EmbeddingModelMismatchError } from '../ports/embedding-store';

/**
 * At bootstrap: the stored chunk vectors must come from the configured embedding model and
 * dimension, else the boot fails (EmbeddingModelMismatchError) rather than semantic_search
 * ranking vectors of two models together. Also warns about searchable classes without embeddings.
 */
@Injectable()
export class SearchIndexVerifier implements OnApplicationBootstrap {
  protected readonly logger = new Logger('ParseAgent');

  constructor(
    protected readonly metadata: MetadataRegistry,
    @Optional() @Inject(SearchIndexer) protected readonly indexer: SearchIndexer | null = null,
    @Optional()
    @Inject(EmbeddingProvider)
    protected readonly embeddings: EmbeddingProvider | null = null,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const searchable = this.metadata
      .all()
      .filter((m) => m.searchable)
      .map((m) => m.className);
    if (searchable.length && !this.embeddings) {
      this.logger.warn(
        `${searchable.join(', ')} ${searchable.length === 1 ? 'is' : 'are'} @AgentSearchable but no embeddings are configured: semantic_search refuses until \`embeddings\` is set in ParseAgentModule.forRoot.`,
      );
    }
    try {
      await this.indexer?.verify();
    } catch (error) {
      if (error instanceof EmbeddingModelMismatchError) throw error;
      // The database not answering is the start-up check's to report; it is checked again on use.
      this.logger.warn(`embedding model check skipped: ${(error as Error).message}`);
    }
  }
}
