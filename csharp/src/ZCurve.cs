// CURVE keys (zmq_curve_keypair, zmq_curve_public) and their Z85 text form.

using System;
using System.Runtime.CompilerServices;
using System.Text;

namespace ZeroMQ
{
    /// <summary>CURVE key pairs and Z85, for <see cref="ZSocket.CurvePublicKey"/> and friends.</summary>
    public static class ZCurve
    {
        /// <summary>
        /// Makes a new key pair (<c>zmq_curve_keypair</c>) as 40-character Z85 strings.
        /// </summary>
        /// <exception cref="ZException">ENOTSUP when the library was built without CURVE.</exception>
        public static void GenerateKeyPair(out string publicKey, out string secretKey)
        {
            LibraryLoader.Ensure();
            KeyPair(out publicKey, out secretKey);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static unsafe void KeyPair(out string publicKey, out string secretKey)
        {
            byte* pub = stackalloc byte[41];
            byte* sec = stackalloc byte[41];
            if (Native.zmq_curve_keypair(pub, sec) != 0)
                throw ZException.For(ZError.GetLastErr(), "zmq_curve_keypair");
            publicKey = Encoding.ASCII.GetString(pub, 40);
            secretKey = Encoding.ASCII.GetString(sec, 40);
            for (int i = 0; i < 41; i++) sec[i] = 0;
        }

        /// <summary>The Z85 public key belonging to a Z85 secret key (<c>zmq_curve_public</c>).</summary>
        public static string PublicKeyOf(string secretKey)
        {
            if (secretKey == null) throw new ArgumentNullException("secretKey");
            if (secretKey.Length != 40) throw new ArgumentException("a Z85 key has 40 characters", "secretKey");
            LibraryLoader.Ensure();
            return PublicOf(Native.Utf8z(secretKey, "secretKey"));
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static unsafe string PublicOf(byte[] sec)
        {
            byte* pub = stackalloc byte[41];
            fixed (byte* s = sec)
            {
                if (Native.zmq_curve_public(pub, s) != 0)
                    throw ZException.For(ZError.GetLastErr(), "zmq_curve_public");
            }
            Array.Clear(sec, 0, sec.Length);
            return Encoding.ASCII.GetString(pub, 40);
        }

        /// <summary>Z85-encodes <paramref name="data"/> (its length a multiple of 4).</summary>
        public static string Z85Encode(byte[] data)
        {
            if (data == null) throw new ArgumentNullException("data");
            if (data.Length % 4 != 0) throw new ArgumentException("length must be a multiple of 4", "data");
            LibraryLoader.Ensure();
            return Encode(data);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static unsafe string Encode(byte[] data)
        {
            var dest = new byte[data.Length / 4 * 5 + 1];
            fixed (byte* d = dest)
            fixed (byte* s = data)
            {
                if (Native.zmq_z85_encode(d, s, (UIntPtr)(uint)data.Length) == null)
                    throw new ZException(ZError.EINVAL, "zmq_z85_encode");
            }
            return Encoding.ASCII.GetString(dest, 0, dest.Length - 1);
        }

        /// <summary>Decodes a Z85 string (its length a multiple of 5).</summary>
        /// <exception cref="ArgumentException">Not valid Z85.</exception>
        public static byte[] Z85Decode(string text)
        {
            if (text == null) throw new ArgumentNullException("text");
            if (text.Length % 5 != 0) throw new ArgumentException("length must be a multiple of 5", "text");
            foreach (char c in text)
                if (c < 0x21 || c > 0x7e) throw new ArgumentException("not a Z85 character: " + (int)c, "text");
            LibraryLoader.Ensure();
            return Decode(Native.Utf8z(text, "text"), text.Length);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static unsafe byte[] Decode(byte[] src, int length)
        {
            var dest = new byte[length / 5 * 4];
            fixed (byte* d = dest)
            fixed (byte* s = src)
            {
                if (Native.zmq_z85_decode(d, s) == null)
                    throw new ArgumentException("not valid Z85", "text");
            }
            return dest;
        }
    }
}
