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
  @AgentField({ description: 'Tenant slug the product belongs to.' })
  tenantId!: string;

  @AgentField({ description: 'Stock-keeping unit, unique within the tenant.' })
  sku!: string;

  @AgentField({ description: 'Product name as shown in the catalogue.' })
  name!: string;

  @AgentField({ description: 'Whether the product can be ordered now.' })
  inStock!: boolean;

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
