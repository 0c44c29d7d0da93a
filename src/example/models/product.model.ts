import {
  AgentDescription,
  AgentField,
  AgentFields,
  AgentJoinFields,
  AgentLargeFields,
  AgentSearchable,
  AgentTenantScope,
  AgentVisible,
  ParseClass,
} from 'nestjs-parse-agent';
import { operatorBypass } from './tenant-scope';

@ParseClass('Product')
@AgentVisible()
@AgentDescription('The catalogue of each tenant.')
@AgentFields('tenantId', 'sku', 'name', 'category', 'price', 'inStock', 'specSheet')
@AgentJoinFields('sku', 'name', 'category', 'price')
@AgentLargeFields('specSheet')
@AgentTenantScope('tenantId', { bypass: operatorBypass })
@AgentSearchable({ fields: ['specSheet'], filterFields: ['category', 'inStock'] })
export class Product {
  @AgentField({
    description: 'Catalogue category.',
    enum: ['tents', 'backpacks', 'lighting', 'cookware', 'apparel'],
  })
  category!: string;

  @AgentField({ description: 'Unit price in the tenant currency.' })
  price!: number;

  @AgentField({ description: 'Long technical description; fetch it only when needed.' })
  specSheet!: string;
}
