// The part of autocannon 9's API that bench/ uses (the package ships no types).
declare module 'autocannon' {
  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    requests?: {
      method?: string;
      path?: string;
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request;
    }[];
  }
  interface Histogram {
    average: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
  }
  interface Result {
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    statusCodeStats?: Record<string, { count: number | string }>;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
