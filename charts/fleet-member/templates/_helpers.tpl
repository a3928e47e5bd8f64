{{/* The labels every object carries, and the Deployment's selector. */}}
{{- define "fleet-member.labels" -}}
app.kubernetes.io/name: fleet-member
{{- end }}
