package fleethttp

// discovery is the API's discovery document (Google API Discovery format), written for this
// server: its resources, methods and schemas.
const discovery = `{
  "kind": "discovery#restDescription",
  "discoveryVersion": "v1",
  "id": "fleet:v1",
  "name": "fleet",
  "version": "v1",
  "title": "fleet API (fleetsim)",
  "description": "Units and machines of a fleetsim hub, in CoreOS fleet's API v1.",
  "protocol": "rest",
  "servicePath": "fleet/v1/",
  "schemas": {
    "Machine": {"id": "Machine", "type": "object", "properties": {
      "id": {"type": "string"}, "primaryIP": {"type": "string"},
      "metadata": {"type": "object", "additionalProperties": {"type": "string"}}}},
    "MachinePage": {"id": "MachinePage", "type": "object", "properties": {
      "machines": {"type": "array", "items": {"$ref": "Machine"}}, "nextPageToken": {"type": "string"}}},
    "UnitOption": {"id": "UnitOption", "type": "object", "properties": {
      "section": {"type": "string"}, "name": {"type": "string"}, "value": {"type": "string"}}},
    "Unit": {"id": "Unit", "type": "object", "properties": {
      "name": {"type": "string"}, "options": {"type": "array", "items": {"$ref": "UnitOption"}},
      "desiredState": {"type": "string", "enum": ["inactive", "loaded", "launched"]},
      "currentState": {"type": "string", "enum": ["inactive", "loaded", "launched"]},
      "machineID": {"type": "string"}}},
    "UnitPage": {"id": "UnitPage", "type": "object", "properties": {
      "units": {"type": "array", "items": {"$ref": "Unit"}}, "nextPageToken": {"type": "string"}}},
    "UnitState": {"id": "UnitState", "type": "object", "properties": {
      "name": {"type": "string"}, "hash": {"type": "string"}, "machineID": {"type": "string"},
      "systemdLoadState": {"type": "string"}, "systemdActiveState": {"type": "string"}, "systemdSubState": {"type": "string"}}},
    "UnitStatePage": {"id": "UnitStatePage", "type": "object", "properties": {
      "states": {"type": "array", "items": {"$ref": "UnitState"}}, "nextPageToken": {"type": "string"}}}
  },
  "resources": {
    "Machines": {"methods": {
      "List": {"id": "fleet.Machine.List", "path": "machines", "httpMethod": "GET",
        "parameters": {"nextPageToken": {"type": "string", "location": "query"}}, "response": {"$ref": "MachinePage"}}}},
    "Units": {"methods": {
      "List": {"id": "fleet.Unit.List", "path": "units", "httpMethod": "GET",
        "parameters": {"nextPageToken": {"type": "string", "location": "query"}}, "response": {"$ref": "UnitPage"}},
      "Get": {"id": "fleet.Unit.Get", "path": "units/{unitName}", "httpMethod": "GET",
        "parameters": {"unitName": {"type": "string", "location": "path", "required": true}}, "response": {"$ref": "Unit"}},
      "Set": {"id": "fleet.Unit.Set", "path": "units/{unitName}", "httpMethod": "PUT",
        "parameters": {"unitName": {"type": "string", "location": "path", "required": true}}, "request": {"$ref": "Unit"}},
      "Delete": {"id": "fleet.Unit.Delete", "path": "units/{unitName}", "httpMethod": "DELETE",
        "parameters": {"unitName": {"type": "string", "location": "path", "required": true}}}}},
    "UnitState": {"methods": {
      "List": {"id": "fleet.UnitState.List", "path": "state", "httpMethod": "GET",
        "parameters": {"nextPageToken": {"type": "string", "location": "query"},
          "machineID": {"type": "string", "location": "query"}, "unitName": {"type": "string", "location": "query"}},
        "response": {"$ref": "UnitStatePage"}}}}
  }
}
`
