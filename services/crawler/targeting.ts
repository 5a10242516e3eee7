import type { SearchRequest } from '../../contracts/search.js';
import type { LocationResolver } from '../geo/locations.js';
import { uuleForPoint } from '../geo/uule.js';
import { CrawlRequestError } from './errors.js';
import type { Targeting } from './googleUrl.js';

/** The URL's targeting plus the canonical name of the location it came from, for `search_metadata.targeting`. */
export interface ResolvedTargeting extends Targeting {
  /** the geotarget's canonical name (only when the request gave a `location`) */
  location?: string;
}

/**
 * gl / hl / uule for a request: `location` through the geotargets, or `lat`/`lon` as an `a+` uule. Values the request
 * gives itself win (buildGoogleUrl applies them). An unknown location is a bad request, never a silent untargeted
 * search: the api answers it with 422 before a job exists, and this check keeps old job messages honest.
 */
export const createTargetingResolver =
  (locations: Pick<LocationResolver, 'resolveLocation'>) =>
  (request: SearchRequest): ResolvedTargeting => {
    if (request.location) {
      const found = locations.resolveLocation(request.location);
      if (!found) throw new CrawlRequestError(`unknown location "${request.location}"`, 'unknown_location');
      return { location: found.canonicalName, gl: found.gl, hl: found.hl, uule: found.uule };
    }
    if (request.lat !== undefined && request.lon !== undefined) {
      return { uule: uuleForPoint(request.lat, request.lon, request.radius) };
    }
    return {};
  };
