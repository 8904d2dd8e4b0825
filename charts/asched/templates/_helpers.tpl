{{- define "asched.labels" -}}
app.kubernetes.io/name: asched
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{- define "asched.selector" -}}
app.kubernetes.io/name: asched
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "asched.leaderElect" -}}
{{- if gt (int .Values.replicas) 1 }}true{{ else }}false{{ end -}}
{{- end -}}

{{/* The KubeSchedulerConfiguration, from values. The Lease name stays `asched`: the
ClusterRole lets asched renew only Leases of that name. */}}
{{- define "asched.config" -}}
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  {{- toYaml .Values.config.clientConnection | nindent 2 }}
leaderElection:
  leaderElect: {{ include "asched.leaderElect" . }}
  {{- toYaml .Values.config.leaderElection | nindent 2 }}
  resourceLock: leases
  resourceName: asched
  resourceNamespace: {{ .Release.Namespace }}
profiles:
  {{- toYaml .Values.config.profiles | nindent 2 }}
{{- with .Values.config.extra }}
{{ toYaml . }}
{{- end }}
{{- end -}}
