from rest_framework import serializers

from caselibrary.models import CaseLibrary


class CaseOutput(serializers.ModelSerializer):
    caseId = serializers.UUIDField(source="case_id", format="hex_verbose")
    sessionId = serializers.CharField(source="diagnosis_id", allow_null=True)
    sourceType = serializers.CharField(source="source_type")
    faultCategory = serializers.CharField(source="fault_category")
    errorCode = serializers.CharField(source="error_code", allow_null=True)
    rootCause = serializers.CharField(source="root_cause")
    createdBy = serializers.CharField(source="created_by")
    updatedBy = serializers.CharField(source="updated_by")
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")

    class Meta:
        model = CaseLibrary
        fields = [
            "caseId",
            "sessionId",
            "sourceType",
            "faultCategory",
            "errorCode",
            "title",
            "rootCause",
            "solution",
            "createdBy",
            "updatedBy",
            "createdAt",
            "updatedAt",
        ]
