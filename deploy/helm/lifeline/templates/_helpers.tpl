{{/* The release's base name, cut to Kubernetes's 63 characters less room for suffixes. */}}
{{- define "lifeline.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "lifeline.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component (web, worker, migrate): pass (list $ "web"). */}}
{{- define "lifeline.selector" -}}
app.kubernetes.io/name: {{ (index . 0).Chart.Name }}
app.kubernetes.io/instance: {{ (index . 0).Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "lifeline.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* True when the processes talk TLS to Temporal: asked for, or implied by a client certificate or an API key. */}}
{{- define "lifeline.temporalTls" -}}
{{- if or .Values.temporal.tls.enabled .Values.temporal.tls.existingSecret .Values.temporal.apiKey.existingSecret -}}true{{- end -}}
{{- end -}}

{{/*
The environment every Lifeline container gets: the non-secret settings in order (chart-computed ones win over
.Values.config; the tracing settings when tracing.endpoint is set), then the existing Secret's variables, then the
Temporal API key and the collector's headers.
*/}}
{{- define "lifeline.env" -}}
{{- $computed := dict
  "TEMPORAL_ADDRESS" .Values.temporal.address
  "TEMPORAL_NAMESPACE" .Values.temporal.namespace
  "PORT" (toString .Values.web.port)
  "WORKER_HEALTH_PORT" (toString .Values.worker.healthPort)
  "LIFELINE_DATA_DIR" "/var/lib/lifeline"
-}}
{{- if include "lifeline.temporalTls" . }}
{{- $_ := set $computed "TEMPORAL_TLS" "true" }}
{{- end }}
{{- with .Values.temporal.tls.serverName }}
{{- $_ := set $computed "TEMPORAL_TLS_SERVER_NAME" . }}
{{- end }}
{{- if .Values.temporal.tls.existingSecret }}
{{- $_ := set $computed "TEMPORAL_TLS_CLIENT_CERT_PATH" "/etc/lifeline/temporal-tls/client.crt" }}
{{- $_ := set $computed "TEMPORAL_TLS_CLIENT_KEY_PATH" "/etc/lifeline/temporal-tls/client.key" }}
{{- if .Values.temporal.tls.caKey }}
{{- $_ := set $computed "TEMPORAL_TLS_SERVER_CA_CERT_PATH" "/etc/lifeline/temporal-tls/ca.crt" }}
{{- end }}
{{- end }}
{{- with .Values.tracing.endpoint }}
{{- $_ := set $computed "OTEL_EXPORTER_OTLP_ENDPOINT" . }}
{{- $_ := set $computed "OTEL_TRACES_SAMPLER" $.Values.tracing.sampler }}
{{- with $.Values.tracing.samplerArg }}
{{- $_ := set $computed "OTEL_TRACES_SAMPLER_ARG" (toString .) }}
{{- end }}
{{- end }}
{{- $all := merge (dict) $computed .Values.config }}
{{- range $name := keys $all | sortAlpha }}
- name: {{ $name }}
  value: {{ get $all $name | toString | quote }}
{{- end }}
{{- with .Values.temporal.apiKey.existingSecret }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.temporal.apiKey.key }}
{{- end }}
{{- if and .Values.tracing.endpoint .Values.tracing.headers.existingSecret }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  valueFrom:
    secretKeyRef:
      name: {{ .Values.tracing.headers.existingSecret }}
      key: {{ .Values.tracing.headers.key }}
{{- end }}
{{- end -}}

{{- define "lifeline.envFrom" -}}
- secretRef:
    name: {{ required "existingSecret: name the Secret holding DATABASE_URL and Lifeline's other secrets" .Values.existingSecret }}
{{- end -}}

{{/* Volumes every Lifeline pod mounts: /tmp, the data folder, and the Temporal client certificate if any. */}}
{{- define "lifeline.volumes" -}}
- name: tmp
  emptyDir:
    sizeLimit: 256Mi
- name: data
  emptyDir:
    sizeLimit: 16Mi
{{- with .Values.temporal.tls.existingSecret }}
- name: temporal-tls
  secret:
    secretName: {{ . }}
    defaultMode: 0440
    items:
      - key: {{ $.Values.temporal.tls.certKey }}
        path: client.crt
      - key: {{ $.Values.temporal.tls.keyKey }}
        path: client.key
      {{- with $.Values.temporal.tls.caKey }}
      - key: {{ . }}
        path: ca.crt
      {{- end }}
{{- end }}
{{- end -}}

{{- define "lifeline.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
- name: data
  mountPath: /var/lib/lifeline
{{- if .Values.temporal.tls.existingSecret }}
- name: temporal-tls
  mountPath: /etc/lifeline/temporal-tls
  readOnly: true
{{- end }}
{{- end -}}

{{/* Pod-level settings every Lifeline pod shares. */}}
{{- define "lifeline.podSpecCommon" -}}
automountServiceAccountToken: false
{{- with .Values.serviceAccountName }}
serviceAccountName: {{ . }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}
