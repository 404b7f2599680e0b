// The service's metadata document (docs/odata.md, "$metadata"), from the key's model: CSDL
// XML (OData CSDL XML 4.01, Version 4.0) and the same in CSDL JSON. A column property
// carries the column's display name as Core.Description and its key as Compplan.ColumnKey,
// so a tool that shows descriptions shows the names people know.
import {
  type AnnotationValue,
  CAPABILITIES_ALIAS,
  CAPABILITIES_NAMESPACE,
  type CapabilityAnnotation,
  containerCapabilities,
  entitySetCapabilities,
} from './capabilities.js';
import type { EntityType, FeedModel, Property } from './model.js';

export const NAMESPACE = 'Compplan';
const CONTAINER = 'Container';
const CORE_VOCABULARY =
  'https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Core.V1.xml';
const CAPABILITIES_VOCABULARY =
  'https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Capabilities.V1.xml';

/** A Capabilities annotation in CSDL XML. */
function annotationXml({ term, value }: CapabilityAnnotation): string {
  const name = `${CAPABILITIES_ALIAS}.${term}`;
  if (typeof value === 'boolean') return `<Annotation Term="${name}" Bool="${value}"/>`;
  if (Array.isArray(value)) {
    const items = (value as readonly string[]).map((item) => `<String>${escapeXml(item)}</String>`);
    return `<Annotation Term="${name}"><Collection>${items.join('')}</Collection></Annotation>`;
  }
  const properties = Object.entries(value).map(
    ([property, bool]) => `<PropertyValue Property="${property}" Bool="${bool}"/>`,
  );
  return `<Annotation Term="${name}"><Record>${properties.join('')}</Record></Annotation>`;
}

/** Capabilities annotations as CSDL JSON members (`"@Capabilities.TopSupported": true`). */
function annotationsJson(annotations: CapabilityAnnotation[]): Record<string, AnnotationValue> {
  return Object.fromEntries(
    annotations.map(({ term, value }) => [`@${CAPABILITIES_ALIAS}.${term}`, value]),
  );
}

const escapeXml = (text: string) =>
  text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    // XML 1.0 cannot carry most control characters, even escaped: they are left out.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: exactly those are removed.
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '');

/** The navigations of MeritCycle: its employees and its exchange rates. */
const NAVIGATIONS = [
  { name: 'Employees', type: 'Employee', set: 'Employees' },
  { name: 'ExchangeRates', type: 'ExchangeRate', set: 'ExchangeRates' },
] as const;

function propertyXml(property: Property): string {
  const facets = [
    `Name="${property.name}"`,
    `Type="${property.type}"`,
    property.nullable ? '' : 'Nullable="false"',
    property.type === 'Edm.Decimal' ? 'Scale="variable"' : '',
  ].filter(Boolean);
  if (property.kind === 'native') return `<Property ${facets.join(' ')}/>`;
  return `<Property ${facets.join(' ')}><Annotation Term="Core.Description" String="${escapeXml(
    property.description,
  )}"/><Annotation Term="${NAMESPACE}.ColumnKey" String="${escapeXml(
    property.part === null ? property.key : `${property.key}/${property.part}`,
  )}"/></Property>`;
}

function entityTypeXml(type: EntityType): string {
  const keys = type.key.map((name) => `<PropertyRef Name="${name}"/>`).join('');
  const navigations =
    type.name === 'MeritCycle'
      ? NAVIGATIONS.map(
          (n) => `<NavigationProperty Name="${n.name}" Type="Collection(${NAMESPACE}.${n.type})"/>`,
        ).join('')
      : '';
  return `<EntityType Name="${type.name}"><Key>${keys}</Key>${type.properties
    .map(propertyXml)
    .join('')}${navigations}</EntityType>`;
}

export function metadataXml(model: FeedModel): string {
  const types = [model.MeritCycles, model.Employees, model.ExchangeRates];
  const sets = types
    .map((type) => {
      const bindings =
        type.name === 'MeritCycle'
          ? NAVIGATIONS.map(
              (n) => `<NavigationPropertyBinding Path="${n.name}" Target="${n.set}"/>`,
            ).join('')
          : '';
      const capabilities = entitySetCapabilities(type.set !== 'ExchangeRates')
        .map(annotationXml)
        .join('');
      return `<EntitySet Name="${type.set}" EntityType="${NAMESPACE}.${type.name}">${bindings}${capabilities}</EntitySet>`;
    })
    .join('');
  const containerAnnotations = containerCapabilities().map(annotationXml).join('');
  return `<?xml version="1.0" encoding="utf-8"?>
<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0"><edmx:Reference Uri="${CORE_VOCABULARY}"><edmx:Include Namespace="Org.OData.Core.V1" Alias="Core"/></edmx:Reference><edmx:Reference Uri="${CAPABILITIES_VOCABULARY}"><edmx:Include Namespace="${CAPABILITIES_NAMESPACE}" Alias="${CAPABILITIES_ALIAS}"/></edmx:Reference><edmx:DataServices><Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="${NAMESPACE}">${types
    .map(entityTypeXml)
    .join(
      '',
    )}<Term Name="ColumnKey" Type="Edm.String" AppliesTo="Property"><Annotation Term="Core.Description" String="The column key (for a part of a composite column: the column key, a slash and the part key) in the REST API's employee columns."/></Term><EntityContainer Name="${CONTAINER}">${sets}${containerAnnotations}</EntityContainer></Schema></edmx:DataServices></edmx:Edmx>
`;
}

function propertyJson(property: Property): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  if (property.type !== 'Edm.String') json.$Type = property.type;
  if (property.nullable) json.$Nullable = true;
  if (property.type === 'Edm.Decimal') json.$Scale = 'variable';
  if (property.kind === 'column') {
    json['@Core.Description'] = property.description;
    json[`@${NAMESPACE}.ColumnKey`] =
      property.part === null ? property.key : `${property.key}/${property.part}`;
  }
  return json;
}

export function metadataJson(model: FeedModel): Record<string, unknown> {
  const schema: Record<string, unknown> = {};
  for (const type of [model.MeritCycles, model.Employees, model.ExchangeRates]) {
    const entity: Record<string, unknown> = { $Kind: 'EntityType', $Key: [...type.key] };
    for (const property of type.properties) entity[property.name] = propertyJson(property);
    if (type.name === 'MeritCycle') {
      for (const n of NAVIGATIONS) {
        entity[n.name] = {
          $Kind: 'NavigationProperty',
          $Collection: true,
          $Type: `${NAMESPACE}.${n.type}`,
        };
      }
    }
    schema[type.name] = entity;
  }
  schema.ColumnKey = { $Kind: 'Term', $AppliesTo: ['Property'] };
  const container: Record<string, unknown> = {
    $Kind: 'EntityContainer',
    ...annotationsJson(containerCapabilities()),
  };
  for (const type of [model.MeritCycles, model.Employees, model.ExchangeRates]) {
    container[type.set] = {
      $Collection: true,
      $Type: `${NAMESPACE}.${type.name}`,
      ...(type.name === 'MeritCycle' && {
        $NavigationPropertyBinding: Object.fromEntries(NAVIGATIONS.map((n) => [n.name, n.set])),
      }),
      ...annotationsJson(entitySetCapabilities(type.set !== 'ExchangeRates')),
    };
  }
  schema[CONTAINER] = container;
  return {
    $Version: '4.0',
    $EntityContainer: `${NAMESPACE}.${CONTAINER}`,
    $Reference: {
      [CORE_VOCABULARY.replace(/\.xml$/, '.json')]: {
        $Include: [{ $Namespace: 'Org.OData.Core.V1', $Alias: 'Core' }],
      },
      [CAPABILITIES_VOCABULARY.replace(/\.xml$/, '.json')]: {
        $Include: [{ $Namespace: CAPABILITIES_NAMESPACE, $Alias: CAPABILITIES_ALIAS }],
      },
    },
    [NAMESPACE]: schema,
  };
}
