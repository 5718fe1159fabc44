"""grpc-go's edition 2023 route_guide.proto served with grpcio and grpcio-reflection, for a test of
`callbench load --reflect`: no stock server here serves reflection of an Editions file.

    python route_guide_reflection.py GEN_DIR

GEN_DIR holds route_guide_pb2.py and route_guide_pb2_grpc.py, made by grpcio-tools' protoc from the
proto as published. The reflection service answers with the file as protoc compiled it (`syntax =
"editions"`, its features as options). Prints "PORT SYNTAX" once listening on 127.0.0.1, then serves
until killed. GetFeature names the point it is given; RecordRoute counts the points it is sent.
"""

import sys
from concurrent import futures

import grpc
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection

sys.path.insert(0, sys.argv[1])
import route_guide_pb2 as pb  # noqa: E402
import route_guide_pb2_grpc as rpc  # noqa: E402


class Guide(rpc.RouteGuideServicer):
    def GetFeature(self, point, context):
        return pb.Feature(name=f"{point.latitude},{point.longitude}", location=point)

    def RecordRoute(self, points, context):
        return pb.RouteSummary(point_count=sum(1 for _ in points))


def main() -> None:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    rpc.add_RouteGuideServicer_to_server(Guide(), server)
    names = (pb.DESCRIPTOR.services_by_name["RouteGuide"].full_name, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    served = descriptor_pb2.FileDescriptorProto.FromString(pb.DESCRIPTOR.serialized_pb)
    print(port, served.syntax, flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
