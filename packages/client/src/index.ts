// @compplan/client: a typed client for the compplan Compensation Planning External API.
export {
  type ClientOptions,
  CompplanClient,
  createClient,
  Delta,
  type DeltaOptions,
  type DeltaPage,
  type ExchangeRates,
  isRemoved,
  List,
  type ListOptions,
  type MeritCycle,
  type MeritCycleColumn,
  type MeritCycleColumns,
  type MeritCycleEmployee,
  type MeritCycleFilters,
  type MeritCycleStatus,
  type Page,
  type Pong,
  type Removed,
} from './client.js';
export {
  AuthenticationError,
  CompplanError,
  ConnectionError,
  DeltaTokenExpiredError,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
  ValidationError,
  type ValidationErrorItem,
} from './errors.js';
export type { components, operations, paths } from './generated/openapi.js';
export type { RequestOptions } from './transport.js';
