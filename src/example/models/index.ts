import { ApiCredential } from './api-credential.model';
import { Customer } from './customer.model';
import { Order } from './order.model';
import { Product } from './product.model';
import { SupportTicket } from './support-ticket.model';
import { Tenant } from './tenant.model';
import { User } from './user.model';

export { ApiCredential, Customer, Order, Product, SupportTicket, Tenant, User };

/** Models registered in the root module; SupportTicket comes from the support feature module. */
export const CORE_MODELS = [Tenant, User, Customer, Product, Order, ApiCredential];
